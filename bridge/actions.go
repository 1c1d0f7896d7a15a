package bridge

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// EditWindow is how long after a message WhatsApp lets its sender edit it.
const EditWindow = 15 * time.Minute

// The reasons a message ends Failed, as message.status webhooks carry them.
// A permanent one ends a message at its attempt, with no retries; any other
// failure is retried until the schedule is used up (retries_exhausted).
const (
	FailNotOnWhatsApp     = "not_on_whatsapp"
	FailLoggedOut         = "logged_out"
	FailEditWindowExpired = "edit_window_expired"
	FailRetriesExhausted  = "retries_exhausted"
	// FailApprovalRejected and FailApprovalExpired: a send that awaited
	// approval was rejected by a person, or not answered in
	// APPROVAL_TIMEOUT.
	FailApprovalRejected = "approval_rejected"
	FailApprovalExpired  = "approval_expired"
)

// Errors of a message that no retry can help.
var (
	// ErrNotOnWhatsApp: the phone number has no WhatsApp account.
	ErrNotOnWhatsApp = &Error{Kind: KindNotFound, Code: FailNotOnWhatsApp, Message: "the number is not on WhatsApp"}
	// ErrLoggedOut: the account the message belongs to is no longer linked;
	// it is never sent from another one.
	ErrLoggedOut = &Error{Kind: KindConflict, Code: FailLoggedOut,
		Message: "the account the message was accepted for logged out"}
	// ErrEditWindowExpired: WhatsApp no longer accepts an edit of the message.
	ErrEditWindowExpired = &Error{Kind: KindConflict, Code: FailEditWindowExpired,
		Message: "WhatsApp allows edits for 15 minutes after a message"}
)

// PermanentFailure is the reason of an error that ends a message at once,
// and false for one worth retrying.
func PermanentFailure(err error) (string, bool) {
	for _, p := range []*Error{ErrNotOnWhatsApp, ErrLoggedOut, ErrEditWindowExpired} {
		if errors.Is(err, p) {
			return p.Code, true
		}
	}
	return "", false
}

// FailReason is why a Failed message failed; empty for any other status. A
// permanent failure keeps its reason as the last error; any other Failed
// message used up its retries.
func (m Message) FailReason() string {
	if m.Status != StatusFailed {
		return ""
	}
	switch m.LastError {
	case FailNotOnWhatsApp, FailLoggedOut, FailEditWindowExpired, FailApprovalRejected, FailApprovalExpired:
		return m.LastError
	}
	return FailRetriesExhausted
}

// Contact is WhatsApp's answer about a phone number.
type Contact struct {
	Number     string // digits with country code
	OnWhatsApp bool
	JID        string // the account's JID; empty when not on WhatsApp
	LID        string // its LID JID when known; empty otherwise
}

// ChatPresence is what the account shows in a chat: typing, recording a
// voice note, or neither any more.
type ChatPresence string

// The chat presences.
const (
	PresenceComposing ChatPresence = "composing"
	PresenceRecording ChatPresence = "recording"
	PresencePaused    ChatPresence = "paused"
)

// ParseChatPresence accepts the presences as the API spells them.
func ParseChatPresence(s string) (ChatPresence, error) {
	switch p := ChatPresence(s); p {
	case PresenceComposing, PresenceRecording, PresencePaused:
		return p, nil
	}
	return "", Invalid(CodeInvalidState, "state must be composing, recording or paused")
}

// maxEmojiBytes bounds a reaction: the longest emoji (a family of four with
// skin tones, joined) is 35 bytes; WhatsApp's own limit is near.
const maxEmojiBytes = 40

// ParseEmoji accepts a reaction: one emoji (with its modifiers, joiners and
// variation selectors), or "" to remove the reaction. Letters, spaces and
// control characters are refused: WhatsApp's apps show only emoji.
func ParseEmoji(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	bad := Invalid(CodeInvalidEmoji, "emoji must be one emoji, or empty to remove the reaction")
	if len(s) > maxEmojiBytes || !utf8.ValidString(s) {
		return "", bad
	}
	first, _ := utf8.DecodeRuneInString(s)
	if isEmojiJoiner(first) {
		return "", bad // a sequence starts with a base
	}
	if strings.ContainsRune("#*0123456789", first) && !strings.HasSuffix(s, "\u20e3") {
		return "", bad // a digit only as a keycap
	}
	for _, r := range s {
		if !isEmojiBase(r) && !isEmojiJoiner(r) && !strings.ContainsRune("#*0123456789", r) {
			return "", bad
		}
	}
	return s, nil
}

// isEmojiBase reports a rune of the blocks that hold emoji.
func isEmojiBase(r rune) bool {
	switch {
	case r == 0xa9, r == 0xae, r == 0x203c, r == 0x2049, r == 0x2122, r == 0x2139:
		return true
	case r >= 0x2194 && r <= 0x21aa, r >= 0x231a && r <= 0x23ff, r >= 0x24c2 && r <= 0x27bf:
		return true
	case r >= 0x2934 && r <= 0x2935, r >= 0x2b05 && r <= 0x2b55, r == 0x3030, r == 0x303d, r == 0x3297, r == 0x3299:
		return true
	case r >= 0x1f000 && r <= 0x1faff:
		return true
	}
	return false
}

// isEmojiJoiner reports what only continues an emoji: the zero-width
// joiner, variation selectors, the keycap and tag characters (flags of
// regions).
func isEmojiJoiner(r rune) bool {
	return r == 0x200d || r == 0xfe0e || r == 0xfe0f || r == 0x20e3 || (r >= 0xe0020 && r <= 0xe007f)
}
