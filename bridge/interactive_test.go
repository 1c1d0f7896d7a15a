package bridge_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// An id is any text without control characters, as Cloud's are: Chatwoot
// sends its items' values as ids, in the agents' language.
func TestButtonIDsAreText(t *testing.T) {
	for id, ok := range map[string]bool{"Não": true, "sí, por favor": true, "注文-17": true, "a\tb": false, "a\nb": false,
		"\x7f": false, "\xff": false, strings.Repeat("ã", 128): true, strings.Repeat("ã", 129): false} {
		err := bridge.ValidateButtons([]bridge.Button{{ID: id, Title: "Yes"}})
		if (err == nil) != ok || (err != nil && bridge.ErrorOf(err).Code != bridge.CodeInvalidButtonID) {
			t.Errorf("id %q: %v", id, err)
		}
	}
}

// FuzzValidateButtons: reply buttons a client sends are refused with one of
// the buttons' codes, or accepted within WhatsApp's bounds.
func FuzzValidateButtons(f *testing.F) {
	f.Add("yes\nno", "Yes\nNo")
	f.Add("a\na", "A\nB")
	f.Add("", "A")
	f.Add("a\nb\nc\nd", "A\nB\nC\nD")
	f.Add("a", "Ä title that is too long")
	f.Fuzz(func(t *testing.T, ids, titles string) {
		idList, titleList := strings.Split(ids, "\n"), strings.Split(titles, "\n")
		buttons := make([]bridge.Button, min(len(idList), len(titleList)))
		for i := range buttons {
			buttons[i] = bridge.Button{ID: idList[i], Title: titleList[i]}
		}
		err := bridge.ValidateButtons(buttons)
		if err != nil {
			if code := bridge.ErrorOf(err).Code; !strings.Contains(code, "button") {
				t.Fatalf("code %q", code)
			}
			return
		}
		if len(buttons) < 1 || len(buttons) > bridge.MaxButtons {
			t.Fatalf("accepted %d buttons", len(buttons))
		}
		seen := map[string]bool{}
		for _, b := range buttons {
			if b.ID == "" || len(b.ID) > bridge.MaxButtonIDBytes || !utf8.ValidString(b.ID) || strings.ContainsFunc(b.ID, unicode.IsControl) ||
				strings.TrimSpace(b.Title) == "" ||
				len([]rune(b.Title)) > bridge.MaxButtonTitleRunes || seen["id"+b.ID] || seen["t"+b.Title] {
				t.Fatalf("accepted %+v", buttons)
			}
			seen["id"+b.ID], seen["t"+b.Title] = true, true
		}
	})
}
