package bridge

import (
	"strings"
	"unicode/utf8"
)

// Bounds of reply buttons, as WhatsApp's apps show them.
const (
	MaxButtons = 3
	// MaxButtonTitleRunes bounds the text on a button.
	MaxButtonTitleRunes = 20
	// MaxButtonIDBytes bounds the id a tap reports back.
	MaxButtonIDBytes = 256
)

// The kinds of Incoming that answer an interactive message: a tap on a
// reply button, or a row picked from a list; ReplyID is its id.
const (
	IncomingButtonReply = "button_reply"
	IncomingListReply   = "list_reply"
)

// Button is one reply button: the text it shows and the id a tap on it
// reports (IncomingButtonReply's ReplyID).
type Button struct {
	ID    string
	Title string
}

// ValidateButtons checks the reply buttons of a message, each fault with
// its own code: 1-3 buttons, each with a title of 1-20 characters and an id
// of 1-256 bytes of printable ASCII, ids and titles unique (a tap names its
// button by both).
func ValidateButtons(buttons []Button) error {
	if len(buttons) == 0 || len(buttons) > MaxButtons {
		return Invalid(CodeInvalidButtons, "a message has 1 to %d buttons, not %d", MaxButtons, len(buttons))
	}
	ids, titles := make(map[string]bool, len(buttons)), make(map[string]bool, len(buttons))
	for i, b := range buttons {
		if !printableASCII(b.ID, MaxButtonIDBytes) {
			return Invalid(CodeInvalidButtonID, "buttons[%d].id must be 1-%d printable ASCII characters", i, MaxButtonIDBytes)
		}
		if !pollText(b.Title, MaxButtonTitleRunes) || strings.ContainsAny(b.Title, "\r\n") {
			return Invalid(CodeInvalidButtonTitle, "buttons[%d].title must be one line of 1-%d characters", i, MaxButtonTitleRunes)
		}
		if ids[b.ID] || titles[b.Title] {
			return Invalid(CodeDuplicateButton, "buttons[%d] repeats an id or a title", i)
		}
		ids[b.ID], titles[b.Title] = true, true
	}
	return nil
}

// printableASCII reports 1-limit bytes of printable ASCII.
func printableASCII(s string, limit int) bool {
	if s == "" || len(s) > limit || !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
