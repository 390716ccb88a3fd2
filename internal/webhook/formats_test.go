package webhook

import (
	"encoding/json"
	"testing"
)

func formatEvent() Event {
	return Event{ID: EventID("a", "preflight", 120), Type: TypeOutcomeChanged, Endpoint: "a", Op: "preflight",
		From: "passing", To: "failing", Reasons: []string{"not_402", "fail_open"}, At: "2026-03-02T09:02:00.000Z"}
}

// TestSlackShape: a Slack incoming-webhook message: text, and blocks of a
// section (mrkdwn) and a context.
func TestSlackShape(t *testing.T) {
	var m struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Type, Text string
			} `json:"text"`
			Elements []struct{ Type, Text string } `json:"elements"`
		} `json:"blocks"`
	}
	b := formatEvent().BodyAs(FormatSlack)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Text != "payability: endpoint a: preflight went from passing to failing (not_402, fail_open)" {
		t.Errorf("text %q", m.Text)
	}
	if len(m.Blocks) != 2 || m.Blocks[0].Type != "section" || m.Blocks[0].Text.Type != "mrkdwn" ||
		m.Blocks[1].Type != "context" || len(m.Blocks[1].Elements) != 1 {
		t.Errorf("blocks %s", b)
	}
}

// TestDiscordShape: a Discord webhook body: content, one embed with a
// colour, a timestamp and fields, and mentions of no one.
func TestDiscordShape(t *testing.T) {
	var m struct {
		Content string `json:"content"`
		Embeds  []struct {
			Title     string `json:"title"`
			Color     int    `json:"color"`
			Timestamp string `json:"timestamp"`
			Fields    []struct {
				Name, Value string
				Inline      bool
			} `json:"fields"`
		} `json:"embeds"`
		AllowedMentions struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	b := formatEvent().BodyAs(FormatDiscord)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Content == "" || len(m.Embeds) != 1 || m.Embeds[0].Color != discordFailing || m.Embeds[0].Timestamp != "2026-03-02T09:02:00.000Z" ||
		len(m.Embeds[0].Fields) != 4 || m.Embeds[0].Fields[2].Value != "not_402, fail_open" || m.AllowedMentions.Parse == nil || len(m.AllowedMentions.Parse) != 0 {
		t.Errorf("discord body %s", b)
	}
}

func TestJSONFormatIsTheEvent(t *testing.T) {
	e := formatEvent()
	if string(e.BodyAs(FormatJSON)) != string(e.Body()) || string(e.BodyAs("")) != string(e.Body()) {
		t.Error("json (and the default) must be the signed event itself")
	}
}
