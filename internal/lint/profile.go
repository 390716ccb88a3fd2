package lint

import (
	_ "embed"
	"encoding/json"
	"net/url"
	"sync"
)

//go:embed x402-lint-profiles.v1.json
var profilesRaw []byte

// ProfilesID is the published profiles document's id.
const ProfilesID = "x402-lint-profiles/v1"

// ProfileRule is one acceptance rule of a directory: a stable id, its
// severity, what it checks and the directory's published source (file or
// page, with its commit or read date).
type ProfileRule struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Checks   string   `json:"checks"`
	Source   []Source `json:"source"`
}

// Profile is one directory's acceptance rules.
type Profile struct {
	Name      string        `json:"name"`
	Directory string        `json:"directory"`
	Read      string        `json:"read"`
	Rules     []ProfileRule `json:"rules"`
}

// ProfilesDoc is the published profiles document.
type ProfilesDoc struct {
	ID       string    `json:"id"`
	Revision string    `json:"revision"`
	Profiles []Profile `json:"profiles"`
}

var profilesOnce = sync.OnceValue(func() ProfilesDoc {
	var d ProfilesDoc
	if err := json.Unmarshal(profilesRaw, &d); err != nil {
		panic("lint: embedded profiles document does not parse: " + err.Error())
	}
	seen := map[string]bool{}
	for _, p := range d.Profiles {
		for _, r := range p.Rules {
			if _, clash := ruleSetOnce().registry[r.ID]; clash || seen[r.ID] {
				panic("lint: profile rule id reused: " + r.ID)
			}
			seen[r.ID] = true
		}
	}
	return d
})

// Profiles returns the published profiles document.
func Profiles() ProfilesDoc { return profilesOnce() }

// ProfilesRaw returns the embedded profiles document's bytes.
func ProfilesRaw() []byte { return append([]byte(nil), profilesRaw...) }

// ProfileByName returns the profile with that name.
func ProfileByName(name string) (Profile, bool) {
	for _, p := range profilesOnce().Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Profile rule ids.
const (
	ruleX402scanHTTPS       = "x402scan_https_required"
	ruleX402scanV2          = "x402scan_v2_required"
	ruleX402scanInputSchema = "x402scan_input_schema_missing"
	ruleX402scanNetwork     = "x402scan_network_unsupported"
	ruleBazaarExtension     = "bazaar_extension_missing"
	ruleBazaarInput         = "bazaar_input_invalid"
	ruleBazaarInfoRejected  = "bazaar_info_rejected"
)

var profileMessages = map[string]string{
	ruleX402scanHTTPS:       "x402scan registers only https resources (http only on localhost)",
	ruleX402scanV2:          "x402scan refuses a resource whose payment options are all x402 v1",
	ruleX402scanInputSchema: "x402scan skips a resource without an input schema in the bazaar extension",
	ruleX402scanNetwork:     "no accepts entry is on a network x402scan supports (Base, Solana mainnet)",
	ruleBazaarExtension:     "the challenge declares no bazaar extension (info and schema); the Bazaar does not catalog it",
	ruleBazaarInput:         "the bazaar info.input is not an http input with a method or an mcp input with a toolName",
	ruleBazaarInfoRejected:  "the bazaar info does not validate against its schema; the facilitator does not catalog it",
}

// x402scanNetworks are the networks x402scan supports, as CAIP-2 ids, v1
// names and its own aliases (SUPPORTED_CHAINS through normalizeChainId).
var x402scanNetworks = map[string]bool{
	"eip155:8453": true, "base": true,
	"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": true, "solana:mainnet": true, "solana": true,
}

// GradeProfile adds the named directory's acceptance rules to a lint of one
// response: in the input the lint graded and its result. It is pure, and
// says nothing about a response that is not a 402 with a challenge (the
// x402-lint findings say why). ok is false for an unknown profile.
func GradeProfile(name string, in Input, res Result) ([]Finding, bool) {
	p, ok := ProfileByName(name)
	if !ok {
		return nil, false
	}
	sev := map[string]Severity{}
	for _, r := range p.Rules {
		sev[r.ID] = r.Severity
	}
	out := []Finding{}
	add := func(id string, leg Leg, field string) {
		out = append(out, Finding{Rule: id, Severity: sev[id], Leg: leg, Field: field, Message: profileMessages[id]})
	}
	if res.Status != 402 || !in.Capture.Usable() {
		return out, true
	}
	ch := Decode(in.Capture)
	var v2 *Document
	switch {
	case ch.Header != nil && ch.HeaderDecodable && ch.Header.Version == 2:
		v2 = ch.Header
	case ch.Body != nil && ch.Body.Version == 2 && !res.Dialect.V2Header:
		v2 = ch.Body
	}
	var v1 *Document
	if ch.Body != nil && ch.Body.Version == 1 {
		v1 = ch.Body
	}
	if v2 == nil && v1 == nil {
		return out, true
	}
	leg := LegBody
	if v2 != nil {
		leg = v2.Leg
	}
	bz, _ := extensionsOf(v2)["bazaar"].(map[string]any)
	info, _ := bz["info"].(map[string]any)
	input, _ := info["input"].(map[string]any)
	switch name {
	case "x402scan":
		if u, err := url.Parse(in.URL); err == nil && u.Scheme != "https" && u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1" {
			add(ruleX402scanHTTPS, LegHTTP, "url")
		}
		if v2 == nil {
			add(ruleX402scanV2, LegHTTP, "PAYMENT-REQUIRED")
		}
		if v2 != nil && input == nil {
			add(ruleX402scanInputSchema, leg, "extensions.bazaar.info.input")
		}
		supported := false
		for _, d := range []*Document{v2, v1} {
			for i := range acceptsOf(d) {
				if m, ok := d.Entry(i); ok && x402scanNetworks[str(m, "network")] {
					supported = true
				}
			}
		}
		if !supported {
			add(ruleX402scanNetwork, leg, "accepts")
		}
	case "bazaar":
		_, hasSchema := bz["schema"].(map[string]any)
		switch {
		case v2 == nil || info == nil || !hasSchema:
			add(ruleBazaarExtension, leg, "extensions.bazaar")
		default:
			t := str(input, "type")
			if input == nil || !(t == "http" && str(input, "method") != "" || t == "mcp" && str(input, "toolName") != "") {
				add(ruleBazaarInput, leg, "extensions.bazaar.info.input")
			}
			for _, f := range res.Findings {
				if f.Leg == leg && (f.Rule == ruleBazaarSchemaInvalid || f.Rule == ruleBazaarInfoInvalid) {
					add(ruleBazaarInfoRejected, leg, "extensions.bazaar.info")
					break
				}
			}
		}
	}
	return out, true
}

func extensionsOf(d *Document) map[string]any {
	if d == nil {
		return nil
	}
	m, _ := d.Root["extensions"].(map[string]any)
	return m
}

func acceptsOf(d *Document) []any {
	if d == nil {
		return nil
	}
	return d.Accepts
}
