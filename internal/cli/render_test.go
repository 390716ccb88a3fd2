package cli

import "testing"

// Census names come from fetched challenges: anything that could drive a
// terminal or pass for the list's own punctuation is printed quoted.
func TestListItemQuotesWhatIsNotAPlainName(t *testing.T) {
	for in, want := range map[string]string{
		"amount":             "amount",
		"usdc_token_account": "usdc_token_account",
		"é":                  "é",
		"":                   `""`,
		"\x1b[2Jmemo":        `"\x1b[2Jmemo"`,
		"memo\nfake":         `"memo\nfake"`,
		"amount, extra":      `"amount, extra"`,
		" memo":              `" memo"`,
		"pay\u202eTo":        `"pay\u202eTo"`,
		`a"b`:                `"a\"b"`,
	} {
		if got := listItem(in); got != want {
			t.Errorf("listItem(%q) = %s, want %s", in, got, want)
		}
	}
}
