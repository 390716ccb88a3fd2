package webhook

import (
	"encoding/json"
	"strings"
)

// Payload formats of a receiver: the signed event as it is (json), or the
// shape a chat service's incoming webhook takes, carrying the same closed
// fields (endpoint id, op, outcomes, reason codes, time, event id), signed
// with the same headers. No seller text can reach them: every field is an
// id from the configuration or a closed-form code.
const (
	FormatJSON    = "json"
	FormatSlack   = "slack"
	FormatDiscord = "discord"
)

// Formats are the payload formats, FormatJSON first (the default).
var Formats = []string{FormatJSON, FormatSlack, FormatDiscord}

// BodyAs is the event's payload in format (FormatJSON for an unknown one).
func (e Event) BodyAs(format string) []byte {
	switch format {
	case FormatSlack:
		return e.slack()
	case FormatDiscord:
		return e.discord()
	}
	return e.Body()
}

// summary is the one line a person reads: "endpoint a: preflight went from
// passing to failing (not_402, fail_open)".
func (e Event) summary() string {
	s := "payability: endpoint " + e.Endpoint + ": " + e.Op + " went from " + e.From + " to " + e.To
	if len(e.Reasons) > 0 {
		s += " (" + strings.Join(e.Reasons, ", ") + ")"
	}
	return s
}

// slack is a Slack incoming-webhook message: a text (the notification's
// fallback) and blocks (a section in mrkdwn, a context with the time and
// the event id). Slack's "Sending messages using incoming webhooks" and
// Block Kit reference define the shape.
func (e Event) slack() []byte {
	reasons := "none"
	if len(e.Reasons) > 0 {
		reasons = "`" + strings.Join(e.Reasons, "`, `") + "`"
	}
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type block struct {
		Type     string `json:"type"`
		Text     *text  `json:"text,omitempty"`
		Elements []text `json:"elements,omitempty"`
	}
	msg := struct {
		Text   string  `json:"text"`
		Blocks []block `json:"blocks"`
	}{Text: e.summary(), Blocks: []block{
		{Type: "section", Text: &text{Type: "mrkdwn", Text: "*" + e.Endpoint + "*: `" + e.Op + "` went from *" + e.From + "* to *" + e.To + "*\nReasons: " + reasons}},
		{Type: "context", Elements: []text{{Type: "mrkdwn", Text: "At " + e.At + " · event `" + e.ID + "`"}}},
	}}
	b, _ := json.Marshal(msg) // strings only: cannot fail
	return b
}

// Discord embed colours: green for passing, red for failing.
const (
	discordPassing = 0x1b5e20
	discordFailing = 0x8b1111
)

// discord is a Discord webhook execution body: content (the line), one
// embed with the fields, and allowed_mentions that mention no one. Discord's
// developer documentation ("Execute Webhook", "Embed Object", "Allowed
// Mentions Object") defines the shape.
func (e Event) discord() []byte {
	type field struct {
		Name   string `json:"name"`
		Value  string `json:"value"`
		Inline bool   `json:"inline"`
	}
	reasons := "none"
	if len(e.Reasons) > 0 {
		reasons = strings.Join(e.Reasons, ", ")
	}
	colour := discordFailing
	if e.To == "passing" {
		colour = discordPassing
	}
	msg := struct {
		Content         string              `json:"content"`
		Embeds          []map[string]any    `json:"embeds"`
		AllowedMentions map[string][]string `json:"allowed_mentions"`
	}{
		Content: e.summary(),
		Embeds: []map[string]any{{
			"title": e.Endpoint + ": " + e.Op + " " + e.To, "color": colour, "timestamp": e.At,
			"fields": []field{{"From", e.From, true}, {"To", e.To, true}, {"Reasons", reasons, false}, {"Event", e.ID, false}},
		}},
		AllowedMentions: map[string][]string{"parse": {}},
	}
	b, _ := json.Marshal(msg) // strings, numbers and slices: cannot fail
	return b
}
