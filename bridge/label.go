package bridge

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Label is a WhatsApp Business label: a name and a colour the account
// gives chats and messages, kept in WhatsApp's app state (the phone and
// every linked device see the same labels).
type Label struct {
	ID    string
	Name  string
	Color int
	// Chats are the chats the label is on, by JID.
	Chats []string
}

// LabelChange is one change of the labels, made by any of the account's
// devices: an edit of a label (Name, Color, Deleted) or an association
// (Chat, and MessageID for a message, with Labeled).
type LabelChange struct {
	Label     string
	Kind      string // LabelEdited, LabelChat or LabelMessage
	Name      string
	Color     int
	Deleted   bool
	Chat      string // the chat's JID
	MessageID string
	Labeled   bool
	At        time.Time
}

// The kinds of label change.
const (
	LabelEdited  = "edit"
	LabelChat    = "chat"
	LabelMessage = "message"
)

// Bounds of a label: WhatsApp Business offers 20 colours and shows names
// of a line.
const (
	MaxLabelColor   = 19
	maxLabelName    = 100
	maxLabelIDChars = 10
)

// ParseLabelName accepts a label's name: 1 to 100 characters, no control
// characters, trimmed.
func ParseLabelName(s string) (string, error) {
	name := strings.TrimSpace(s)
	if name == "" || utf8.RuneCountInString(name) > maxLabelName || !utf8.ValidString(name) ||
		strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return "", Invalid(CodeInvalidLabelName, "name must be 1 to %d characters without control characters", maxLabelName)
	}
	return name, nil
}

// ParseLabelColor accepts a colour's index, 0 to MaxLabelColor.
func ParseLabelColor(n int) (int, error) {
	if n < 0 || n > MaxLabelColor {
		return 0, Invalid(CodeInvalidLabelColor, "color must be a number from 0 to %d (WhatsApp's label colours)", MaxLabelColor)
	}
	return n, nil
}

// ParseLabelID accepts a label's id as WhatsApp numbers them: digits.
func ParseLabelID(s string) (string, error) {
	if !plainDigits(s, 1, maxLabelIDChars) {
		return "", Invalid(CodeInvalidLabel, "the path must name a label by its id, digits")
	}
	return s, nil
}

// ErrLabelNotFound: no label with this id.
var ErrLabelNotFound = Errorf(KindNotFound, CodeLabelNotFound, "no label with this id")

// ErrLabelsUnavailable: the account's phone has not shared the keys of
// its app state with the bridge yet, so labels can be neither read nor
// written.
var ErrLabelsUnavailable = Errorf(KindUnavailable, CodeLabelsUnavailable,
	"the phone has not shared its app state keys with the bridge yet; open WhatsApp on the phone and retry")
