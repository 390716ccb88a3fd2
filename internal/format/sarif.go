package format

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SARIF 2.1.0 as GitHub code scanning accepts it (docs/ci.md, "GitHub's
// SARIF upload rules"): one run per invocation, the op's rule set as
// tool.driver.rules (a rule a result names that the set lacks, such as a
// scan's refused/<rule>, is appended), one result per finding, located in
// the repository file that lists the URLs (Run.Artifact) at the line naming
// the endpoint, with the endpoint URL in the message and the properties.

// SARIFSchemaURI is the schema a log names.
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// RepositoryURL is payability's home: the driver's informationUri and the
// base of every rule's helpUri.
const RepositoryURL = "https://github.com/exchangerebel/payability"

// GitHub's documented upload limits this renderer keeps to.
const (
	// SARIFMaxResults is the most results of one run code scanning accepts;
	// past it a run keeps the most severe (errors, then warnings, then
	// notes, each in order) and counts the rest in properties.omittedResults.
	SARIFMaxResults = 25000
	// SARIFMaxRules is the most rules of one run.
	SARIFMaxRules = 25000
	// SARIFMaxText is the most characters of a rule's shortDescription and
	// fullDescription.
	SARIFMaxText = 1024
)

// The limits in force (tests lower them).
var maxResults, maxRules = SARIFMaxResults, SARIFMaxRules

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool       `json:"tool"`
	AutomationDetails sarifAutomation `json:"automationDetails"`
	ColumnKind        string          `json:"columnKind"`
	Results           []sarifResult   `json:"results"`
	Properties        *sarifRunProps  `json:"properties,omitempty"`
}

type sarifRunProps struct {
	OmittedResults int `json:"omittedResults"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	ShortDescription     sarifText     `json:"shortDescription"`
	FullDescription      sarifText     `json:"fullDescription"`
	Help                 sarifText     `json:"help"`
	HelpURI              string        `json:"helpUri"`
	DefaultConfiguration *sarifDefault `json:"defaultConfiguration,omitempty"`
}

type sarifDefault struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifProps        `json:"properties"`
	// Suppressions and BaselineState: SARIF 2.1.0 §3.27.23 and §3.27.24.
	Suppressions  []sarifSuppression `json:"suppressions,omitempty"`
	BaselineState string             `json:"baselineState,omitempty"`
}

// sarifProps carries the endpoint and the finding's coordinates as data
// (JSON-escaped, never interpreted).
type sarifProps struct {
	Endpoint string `json:"endpoint"`
	Op       string `json:"op,omitempty"`
	Field    string `json:"field,omitempty"`
	Leg      string `json:"leg,omitempty"`
	Entry    *int   `json:"entry,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           region        `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// UnnamedRule is the rule id of a finding that names none (only a saved
// report read back can carry one).
const UnnamedRule = "unnamed"

// FingerprintKey is payability's own partialFingerprints entry; code
// scanning reads only primaryLocationLineHash, which carries the same hash.
const FingerprintKey = "payabilityFinding/v2"

// fingerprint identifies a finding across runs: its rule, endpoint, leg,
// entry and field (never its line, so moving the URL in the file keeps the
// alert), as SHA-256 over their JSON array.
func fingerprint(rule, endpoint string, f Finding) string {
	var entry any
	if f.Entry != nil {
		entry = *f.Entry
	}
	raw, _ := json.Marshal([]any{rule, endpoint, f.Leg, entry, f.Field})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

type pendingResult struct {
	res  Result
	f    Finding
	rank int
}

// SARIF writes run as a SARIF 2.1.0 log with one run.
func SARIF(w io.Writer, run Run) error {
	var pending []pendingResult
	for _, res := range run.Results {
		for _, f := range res.Findings() {
			rank := f.Level.rank()
			if f.Suppressed != nil {
				rank = 0 // kept after every finding that counts
			}
			pending = append(pending, pendingResult{res, f, rank})
		}
	}
	omitted := 0
	if len(pending) > maxResults {
		// Keep the most severe, each level in order.
		var kept []pendingResult
		for r := 3; r >= 0 && len(kept) < maxResults; r-- {
			for _, p := range pending {
				if p.rank == r && len(kept) < maxResults {
					kept = append(kept, p)
				}
			}
		}
		omitted = len(pending) - len(kept)
		pending = kept
	}

	rules := append([]Rule(nil), run.Rules...)
	index := map[string]int{}
	for i, r := range rules {
		if _, dup := index[r.ID]; !dup {
			index[r.ID] = i
		}
	}
	artifact := run.Artifact.URI()
	seen := map[string]int{}
	results := []sarifResult{}
	for _, p := range pending {
		res, f := p.res, p.f
		if f.Rule == "" {
			f.Rule = UnnamedRule // code scanning requires a rule id
		}
		i, ok := index[f.Rule]
		if !ok {
			if len(rules) >= maxRules {
				omitted++
				continue
			}
			i = len(rules)
			index[f.Rule] = i
			rules = append(rules, Rule{ID: f.Rule, Level: f.Level})
		}
		fp := fingerprint(f.Rule, res.URL, f)
		seen[fp]++
		loc := sarifLocation{
			PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifact}, Region: run.Artifact.find(res.URL)},
		}
		if f.Field != "" {
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: safeText(f.Field, ""), Kind: "member"}}
		}
		results = append(results, sarifResult{
			RuleID:    f.Rule,
			RuleIndex: i,
			Level:     string(f.Level),
			Message:   sarifText{Text: resultMessage(res.URL, f)},
			Locations: []sarifLocation{loc},
			PartialFingerprints: map[string]string{
				"primaryLocationLineHash": fp[:16] + ":" + strconv.Itoa(seen[fp]),
				FingerprintKey:            fp,
			},
			Properties:    sarifProps{Endpoint: res.URL, Op: res.Op, Field: f.Field, Leg: f.Leg, Entry: f.Entry},
			Suppressions:  sarifSuppressions(f.Suppressed),
			BaselineState: baselineState(run.Baselined, f.Suppressed),
		})
	}
	srules := make([]sarifRule, len(rules))
	for i, r := range rules {
		srules[i] = sarifRuleOf(r)
	}
	out := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name: "payability", Version: run.ToolVersion,
			InformationURI: RepositoryURL,
			Rules:          srules,
		}},
		AutomationDetails: sarifAutomation{ID: "payability/" + automationOp(run.Op) + "/"},
		ColumnKind:        "utf16CodeUnits",
		Results:           results,
	}
	if omitted > 0 {
		out.Properties = &sarifRunProps{OmittedResults: omitted}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []sarifRun{out}})
}

// resultMessage is a result's message.text: the endpoint, the field and
// the message, one line, as inert plain text.
func resultMessage(endpoint string, f Finding) string {
	msg := f.Message
	if msg == "" {
		msg = "rule " + f.Rule + " did not hold"
	}
	if f.Field != "" {
		msg = f.Field + ": " + msg
	}
	if endpoint == "" {
		endpoint = "(no URL)"
	}
	return sarifMessage(endpoint + " " + msg)
}

// automationOp is the op in automationDetails.id: a published op, else
// "unknown" (an id is a category path, so no input shapes it).
func automationOp(op string) string {
	if knownOp(op) {
		return op
	}
	return "unknown"
}

// sarifRuleOf describes one rule as code scanning requires: a short and a
// full description (at most SARIFMaxText characters), help text and the
// helpUri of the rule's documentation, and its default level (omitted for
// a rule naming a passing state: code scanning knows only note, warning and
// error, and no result names such a rule).
func sarifRuleOf(r Rule) sarifRule {
	desc := r.Description
	if desc == "" {
		desc = fallbackDescription(r.ID)
	}
	desc = clip(safeText(desc, ""), SARIFMaxText)
	help := helpURI(r.ID)
	out := sarifRule{
		ID:               r.ID,
		ShortDescription: sarifText{Text: clip(firstSentence(desc), SARIFMaxText)},
		FullDescription:  sarifText{Text: desc},
		Help:             sarifText{Text: clip(desc+" Documentation: "+help, 4*SARIFMaxText)},
		HelpURI:          help,
	}
	if r.Level != "" {
		out.DefaultConfiguration = &sarifDefault{Level: string(r.Level)}
	}
	return out
}

// fallbackDescription is the description of a rule no published set
// describes (a scan's refused/<rule> and error/<code>, a lint rule a saved
// report names that this build does not know).
func fallbackDescription(id string) string {
	switch {
	case strings.HasPrefix(id, "refused/"):
		return "The URL policy refused the entry; no request was sent."
	case strings.HasPrefix(id, "error/"):
		return "The entry produced no verdict (interrupted or an internal error)."
	case mcpRuleText[id] != "":
		return mcpRuleText[id]
	}
	return "A rule this build of payability does not describe."
}

// lintFamilyAnchor is the section of docs/lint.md that lists each family of
// x402-lint/v1 rules (its GitHub heading anchor); TestHelpURIsNameTheirSections
// checks every rule against the document.
var lintFamilyAnchor = map[string]string{
	"http":       "http-response",
	"dialect":    "dialects-and-the-two-legs",
	"document":   "each-leg",
	"entry":      "every-accepts-entry",
	"svm":        "exact-and-upto-on-solana",
	"evm":        "exact-on-evm",
	"upto":       "upto",
	"extensions": "extensions",
	"chain":      "chain-readiness-opt-in",
	"origin":     "discovery-documents-origin-mode",
}

// helpURI is the documentation of a rule: a lint rule's section of
// docs/lint.md, the severity mapping of docs/ci.md for every other op's.
func helpURI(id string) string {
	if isProfileRule(id) {
		return RepositoryURL + "/blob/main/docs/lint.md#directory-profiles---profile"
	}
	if fam, ok := lintFamilies()[id]; ok {
		if a, ok := lintFamilyAnchor[fam]; ok {
			return RepositoryURL + "/blob/main/docs/lint.md#" + a
		}
		return RepositoryURL + "/blob/main/docs/lint.md#the-rules"
	}
	return RepositoryURL + "/blob/main/docs/ci.md#severity-mapping"
}

var sentenceEnd = regexp.MustCompile(`[.!?](\s|$)`)

// firstSentence is s up to its first sentence end (code scanning shows the
// short description next to each result).
func firstSentence(s string) string {
	if loc := sentenceEnd.FindStringIndex(s); loc != nil && loc[0] > 0 {
		return strings.TrimSpace(s[:loc[0]+1])
	}
	return s
}

// clip bounds s to n characters, the last one an ellipsis when it was cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
