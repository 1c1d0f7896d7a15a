package bridge

import (
	"strings"
	"unicode"
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
// of 1-256 bytes of text without control characters, ids and titles unique
// (a tap names its button by both). An id may be any text, as Cloud's are:
// Chatwoot sends its items' values, in the agents' language, as ids.
func ValidateButtons(buttons []Button) error {
	if len(buttons) == 0 || len(buttons) > MaxButtons {
		return Invalid(CodeInvalidButtons, "a message has 1 to %d buttons, not %d", MaxButtons, len(buttons))
	}
	ids, titles := make(map[string]bool, len(buttons)), make(map[string]bool, len(buttons))
	for i, b := range buttons {
		if !buttonID(b.ID) {
			return Invalid(CodeInvalidButtonID, "buttons[%d].id must be 1-%d bytes of text without control characters", i, MaxButtonIDBytes)
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

// buttonID reports 1-MaxButtonIDBytes bytes of UTF-8 text without control
// characters: the id travels as JSON in the button and back in the tap.
func buttonID(s string) bool {
	return s != "" && len(s) <= MaxButtonIDBytes && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}
