package lint

import "strings"

// KnownScheme reports whether s is a payment scheme this rule set grades
// (exact, upto): the closed set a report may name; any other is "other".
func KnownScheme(s string) bool { return knownSchemes[s] }

// KnownNetwork reports whether id is a CAIP-2 chain id a report may name as
// it is: an eip155 chain (its reference is a decimal chain id, a number, not
// text) or one of the ids the v1 network names map to (v1Networks). Any
// other CAIP-2 id, though well-formed, is a seller's choice of characters
// and is reported as "other".
func KnownNetwork(id string) bool {
	if ref, ok := strings.CutPrefix(id, "eip155:"); ok {
		if ref == "" || len(ref) > 20 || (len(ref) > 1 && ref[0] == '0') {
			return false
		}
		for i := 0; i < len(ref); i++ {
			if ref[i] < '0' || ref[i] > '9' {
				return false
			}
		}
		return true
	}
	for _, known := range v1Networks {
		if id == known {
			return true
		}
	}
	return false
}
