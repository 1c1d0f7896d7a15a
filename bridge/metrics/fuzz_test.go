package metrics

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// Any subscription name and any HELP text reach Prometheus' parser
// unchanged: the escaping leaves nothing that ends a value or a line early.
func FuzzEscaping(f *testing.F) {
	for _, seed := range []string{"default", `a\b"c` + "\nd", `\\n`, `"}`, "\u00e9\u2028", `\`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) { // label values and HELP are UTF-8 text
			t.Skip()
		}
		m := New()
		m.WebhookDeadLetter(text)
		fams := parse(t, serve(m, http.MethodGet, nil).Body.String())
		if got := value(t, fams, "msgbridge_webhook_dead_letters_total", "subscription", text); got != 1 {
			t.Errorf("subscription %q: %v", text, got)
		}
		var buf bytes.Buffer
		writeText(&buf, []family{gaugeFamily("fuzzed_help", text, 1)})
		// The format cannot keep a HELP text's leading blanks: the parser
		// skips them as the separator after the name.
		if got, want := parse(t, buf.String())["fuzzed_help"].GetHelp(), strings.TrimLeft(text, " \t"); got != want {
			t.Errorf("help %q, want %q", got, want)
		}
	})
}
