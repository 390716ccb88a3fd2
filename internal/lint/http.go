package lint

import "strings"

// hygiene grades the HTTP response around a 402: caching and CORS.
func (g *grader) hygiene() {
	h := g.in.Capture.Header
	if !hasToken(h["Cache-Control"], "no-store") {
		g.add(ruleCacheControl, LegHTTP, nil, "Cache-Control")
	}
	if _, cors := h.Get("Access-Control-Allow-Origin"); cors {
		exposed := h["Access-Control-Expose-Headers"]
		if !hasToken(exposed, "payment-required") && !hasToken(exposed, "*") {
			g.add(ruleCORSExposeHeaders, LegHTTP, nil, "Access-Control-Expose-Headers")
		}
	}
}

// hasToken reports whether any comma-separated element of the header values
// is token (case-insensitive), ignoring a directive's "=value".
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
			if strings.EqualFold(strings.TrimSpace(name), token) {
				return true
			}
		}
	}
	return false
}
