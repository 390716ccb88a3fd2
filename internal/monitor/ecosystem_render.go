package monitor

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReportFormats are the renderings of the ecosystem report besides its
// signed JSON.
var ReportFormats = []string{"json", "csv", "markdown"}

// CSVHeader is the first row of the CSV rendering. Each row is one count
// out of its denominator: section (states, by_network, by_scheme,
// by_x402_version, by_source, top_codes, daily), op, dimension and value
// (empty for states), state (empty for a row of endpoints or a code),
// count, of, percent (empty when of is 0).
var CSVHeader = []string{"section", "op", "dimension", "value", "state", "count", "of", "percent"}

// WriteReportCSV writes r as CSV (RFC 4180).
func WriteReportCSV(w io.Writer, r EcosystemReport) error {
	cw := csv.NewWriter(w)
	row := func(section, op, dim, value, state string, p Portion) {
		pct := ""
		if p.Percent != nil {
			pct = *p.Percent
		}
		cw.Write([]string{section, op, dim, value, state, strconv.FormatInt(p.Count, 10), strconv.FormatInt(p.Of, 10), pct})
	}
	cw.Write(CSVHeader)
	for _, o := range r.Ops {
		for _, s := range o.States {
			row("states", o.Op, "", "", s.State, s.Portion)
		}
		for _, d := range breakdowns(o) {
			for _, b := range d.rows {
				row("by_"+d.dim, o.Op, d.dim, b.Value, "", b.Endpoints)
				for _, s := range b.States {
					row("by_"+d.dim, o.Op, d.dim, b.Value, s.State, s.Portion)
				}
			}
		}
		for _, c := range o.TopCodes {
			row("top_codes", o.Op, o.CodeKind, c.Code, "", c.Portion)
		}
	}
	for _, d := range r.Daily {
		for _, o := range d.Ops {
			for _, s := range o.States {
				row("daily", o.Op, "date", d.Date, s.State, s.Portion)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

type dimRows struct {
	dim, title string
	rows       []Breakdown
}

func breakdowns(o OpReport) []dimRows {
	return []dimRows{
		{"network", "Network (CAIP-2)", o.ByNetwork},
		{"scheme", "Scheme", o.ByScheme},
		{"x402_version", "x402 version", o.ByX402Version},
		{"source", "Source", o.BySource},
	}
}

// PortionText is a portion in words: "12 of 40 (30.0%)", or "0 of 0".
func PortionText(p Portion) string {
	s := strconv.FormatInt(p.Count, 10) + " of " + strconv.FormatInt(p.Of, 10)
	if p.Percent != nil {
		s += " (" + *p.Percent + "%)"
	}
	return s
}

// WriteReportMarkdown writes r as Markdown tables.
func WriteReportMarkdown(w io.Writer, r EcosystemReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# x402 ecosystem report\n\n")
	fmt.Fprintf(&b, "Generated %s by payability %s (`%s`). Window: %s to %s (%d UTC days).\n",
		r.GeneratedAt, r.Version, r.Kind, r.Window.Since, r.Window.Until, r.Window.Days)
	b.WriteString("Each endpoint counts once per op, by its newest observation in the window; every figure is a count of what payability observed, out of the denominator stated.\n")
	for _, o := range r.Ops {
		fmt.Fprintf(&b, "\n## %s\n\n%d endpoints with a %s observation in the window.\n\n", o.Op, o.Endpoints, o.Op)
		b.WriteString("| State | Endpoints |\n|---|---|\n")
		for _, s := range o.States {
			fmt.Fprintf(&b, "| %s | %s |\n", s.State, PortionText(s.Portion))
		}
		for _, d := range breakdowns(o) {
			fmt.Fprintf(&b, "\n### By %s\n\n| %s | Endpoints |", strings.ToLower(d.title[:1])+d.title[1:], d.title)
			for _, s := range o.States {
				fmt.Fprintf(&b, " %s |", s.State)
			}
			b.WriteString("\n|---|---|" + strings.Repeat("---|", len(o.States)) + "\n")
			for _, row := range d.rows {
				fmt.Fprintf(&b, "| %s | %s |", row.Value, PortionText(row.Endpoints))
				for _, s := range row.States {
					fmt.Fprintf(&b, " %s |", PortionText(s.Portion))
				}
				b.WriteString("\n")
			}
		}
		kind := "Reason code"
		if o.CodeKind == "rule_id" {
			kind = "Rule id"
		}
		fmt.Fprintf(&b, "\n### Most frequent %ss (top %d)\n\n", strings.ToLower(kind), r.TopCodesLimit)
		if len(o.TopCodes) == 0 {
			b.WriteString("None observed.\n")
			continue
		}
		fmt.Fprintf(&b, "| %s | Endpoints |\n|---|---|\n", kind)
		for _, c := range o.TopCodes {
			fmt.Fprintf(&b, "| `%s` | %s |\n", c.Code, PortionText(c.Portion))
		}
	}
	b.WriteString("\n## Daily\n\nChecks per UTC day and their states.\n\n| Date |")
	for _, o := range r.Ops {
		fmt.Fprintf(&b, " %s checks |", o.Op)
		for _, s := range o.States {
			fmt.Fprintf(&b, " %s %s |", o.Op, s.State)
		}
	}
	b.WriteString("\n|---|")
	for _, o := range r.Ops {
		b.WriteString(strings.Repeat("---|", 1+len(o.States)))
	}
	b.WriteString("\n")
	for _, d := range r.Daily {
		fmt.Fprintf(&b, "| %s |", d.Date)
		for i, o := range d.Ops {
			fmt.Fprintf(&b, " %d |", o.Checks)
			for _, want := range r.Ops[i].States {
				fmt.Fprintf(&b, " %s |", PortionText(o.StateOf(want.State)))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// StateOf is the day's portion in state: 0 of the day's checks when none.
func (d DayOp) StateOf(state string) Portion {
	for _, s := range d.States {
		if s.State == state {
			return s.Portion
		}
	}
	return PortionOf(0, d.Checks)
}
