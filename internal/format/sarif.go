package format

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
)

// SARIF 2.1.0: one run per invocation, the op's rule set as
// tool.driver.rules (a rule a result names that the set lacks, such as a
// scan's refused/<rule>, is appended), one result per finding, located at
// the endpoint URL (a scan entry whose URL does not parse as an absolute URL
// has only its logical location).

// SARIFSchemaURI is the schema a log names.
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool       `json:"tool"`
	AutomationDetails sarifAutomation `json:"automationDetails"`
	Results           []sarifResult   `json:"results"`
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
	ID                   string       `json:"id"`
	ShortDescription     *sarifText   `json:"shortDescription,omitempty"`
	DefaultConfiguration sarifDefault `json:"defaultConfiguration"`
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
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

func sarifLevel(l Level) string {
	if l == "" {
		return "none"
	}
	return string(l)
}

// SARIF writes run as a SARIF 2.1.0 log with one run.
func SARIF(w io.Writer, run Run) error {
	rules := append([]Rule(nil), run.Rules...)
	index := map[string]int{}
	for i, r := range rules {
		index[r.ID] = i
	}
	results := []sarifResult{}
	for _, res := range run.Results {
		for _, f := range res.Findings() {
			i, ok := index[f.Rule]
			if !ok {
				i = len(rules)
				index[f.Rule] = i
				rules = append(rules, Rule{ID: f.Rule, Level: f.Level})
			}
			loc := sarifLocation{LogicalLocations: []sarifLogical{{FullyQualifiedName: f.Field, Kind: "member"}}}
			if u, err := url.Parse(res.URL); err == nil && u.IsAbs() && u.Host != "" {
				loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: res.URL}}
			}
			fp := sha256.Sum256([]byte(res.Op + "\x00" + res.URL + "\x00" + f.Rule + "\x00" + f.Field))
			results = append(results, sarifResult{
				RuleID:              f.Rule,
				RuleIndex:           i,
				Level:               sarifLevel(f.Level),
				Message:             sarifText{Text: f.Field + ": " + f.Message},
				Locations:           []sarifLocation{loc},
				PartialFingerprints: map[string]string{"payabilityFinding/v1": hex.EncodeToString(fp[:16])},
			})
		}
	}
	srules := make([]sarifRule, len(rules))
	for i, r := range rules {
		srules[i] = sarifRule{ID: r.ID, DefaultConfiguration: sarifDefault{Level: sarifLevel(r.Level)}}
		if r.Description != "" {
			srules[i].ShortDescription = &sarifText{Text: r.Description}
		}
	}
	log := sarifLog{
		Schema:  SARIFSchemaURI,
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{
				Name: "payability", Version: run.ToolVersion,
				InformationURI: "https://github.com/exchangerebel/payability",
				Rules:          srules,
			}},
			AutomationDetails: sarifAutomation{ID: "payability/" + run.Op + "/"},
			Results:           results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}
