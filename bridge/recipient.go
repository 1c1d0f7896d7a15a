package bridge

import "strings"

// RecipientKind says how WhatsApp addresses a recipient.
type RecipientKind int

// The kinds of recipient.
const (
	// RecipientPhone: a user by phone number (digits with country code).
	RecipientPhone RecipientKind = iota + 1
	// RecipientGroup: a group by its id.
	RecipientGroup
	// RecipientLID: a user by the LID WhatsApp gives instead of a phone
	// number when the number is hidden.
	RecipientLID
	// RecipientStatus: the status broadcast (StatusBroadcast), whose
	// audience a StatusPost names.
	RecipientStatus
	// RecipientChannel: a channel (newsletter) by its id; only the
	// channels the account owns or administers take its posts.
	RecipientChannel
)

// The JID servers of each kind: WhatsApp's address format lives here only.
const (
	phoneServer = "@s.whatsapp.net"
	groupServer = "@g.us"
	lidServer   = "@lid"
)

// E.164 numbers have at most 15 digits; below 7 no country's numbering plan
// gives a reachable subscriber.
const (
	minPhoneDigits = 7
	maxPhoneDigits = 15
	maxIDDigits    = 64
)

// ErrInvalidRecipient explains the accepted forms.
var ErrInvalidRecipient = &Error{
	Kind: KindInvalid, Code: CodeInvalidNumber,
	Message: "number must be digits with country code, a group JID <id>@g.us, a LID <digits>@lid or a channel <digits>@newsletter",
}

// Recipient is whom a message goes to or comes from.
type Recipient struct {
	Kind RecipientKind
	// ID is the phone number's digits, the group's id or the LID's digits.
	ID string
}

// PhoneRecipient is the user with the phone number digits (already valid).
func PhoneRecipient(digits string) Recipient { return Recipient{Kind: RecipientPhone, ID: digits} }

// ParseRecipient accepts what a client may name: a phone number with its
// country code (an optional leading '+', spaces and single dashes between
// digits removed), a group JID <id>@g.us, a LID JID <digits>@lid, or a
// user JID <digits>@s.whatsapp.net.
func ParseRecipient(s string) (Recipient, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasSuffix(s, groupServer):
		return parseGroup(strings.TrimSuffix(s, groupServer))
	case strings.HasSuffix(s, channelServer):
		return channelRecipient(strings.TrimSuffix(s, channelServer))
	case strings.HasSuffix(s, lidServer):
		id := strings.TrimSuffix(s, lidServer)
		if !plainDigits(id, 1, maxIDDigits) {
			return Recipient{}, ErrInvalidRecipient
		}
		return Recipient{Kind: RecipientLID, ID: id}, nil
	case strings.HasSuffix(s, phoneServer):
		s = strings.TrimSuffix(s, phoneServer)
		if !plainDigits(s, minPhoneDigits, maxPhoneDigits) {
			return Recipient{}, ErrInvalidRecipient
		}
	}
	digits, err := NormalizePhone(s)
	if err != nil {
		return Recipient{}, err
	}
	return PhoneRecipient(digits), nil
}

// NormalizePhone returns the digits of a phone number given with its country
// code: "+49 151-1234 5678" -> "4915112345678". Separators stand only
// between digits, one at a time.
func NormalizePhone(number string) (string, error) {
	s := strings.TrimPrefix(strings.TrimSpace(number), "+")
	var b strings.Builder
	b.Grow(len(s))
	prevDigit := false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			b.WriteRune(c)
			prevDigit = true
		case (c == ' ' || c == '-') && prevDigit:
			prevDigit = false
		default:
			return "", ErrInvalidRecipient
		}
	}
	digits := b.String()
	if !prevDigit || len(digits) < minPhoneDigits || len(digits) > maxPhoneDigits || digits[0] == '0' {
		return "", ErrInvalidRecipient
	}
	return digits, nil
}

// parseGroup accepts a group id: digits not starting with 0, optionally two
// such runs joined by a dash (the legacy creator-timestamp form).
func parseGroup(id string) (Recipient, error) {
	if id == "" || len(id) > maxIDDigits {
		return Recipient{}, ErrInvalidRecipient
	}
	parts := strings.Split(id, "-")
	if len(parts) > 2 {
		return Recipient{}, ErrInvalidRecipient
	}
	for _, p := range parts {
		if !plainDigits(p, 1, maxIDDigits) || p[0] == '0' {
			return Recipient{}, ErrInvalidRecipient
		}
	}
	return Recipient{Kind: RecipientGroup, ID: id}, nil
}

func plainDigits(s string, minLen, maxLen int) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// JID is the recipient's WhatsApp address.
func (r Recipient) JID() string {
	switch r.Kind {
	case RecipientPhone:
		return r.ID + phoneServer
	case RecipientGroup:
		return r.ID + groupServer
	case RecipientLID:
		return r.ID + lidServer
	case RecipientStatus:
		return StatusJID
	case RecipientChannel:
		return r.ID + channelServer
	}
	return ""
}

// String is the recipient as the API and webhooks show it: a phone number's
// digits, or the JID of a group or a LID.
func (r Recipient) String() string {
	if r.Kind == RecipientPhone {
		return r.ID
	}
	return r.JID()
}

// IsZero reports the zero Recipient.
func (r Recipient) IsZero() bool { return r.Kind == 0 }

// RecipientFromJID reads a JID as WhatsApp or the store gives it; a device
// suffix (":3") or agent part is dropped, since messages go to the user.
func RecipientFromJID(jid string) (Recipient, error) {
	if jid == StatusJID {
		return StatusBroadcast, nil
	}
	user, server, ok := strings.Cut(jid, "@")
	if !ok {
		return Recipient{}, ErrInvalidRecipient
	}
	if i := strings.IndexAny(user, ":."); i >= 0 && server != "g.us" {
		user = user[:i]
	}
	switch "@" + server {
	case phoneServer:
		if !plainDigits(user, 1, maxIDDigits) {
			return Recipient{}, ErrInvalidRecipient
		}
		return PhoneRecipient(user), nil
	case groupServer:
		return parseGroup(user)
	case lidServer:
		if !plainDigits(user, 1, maxIDDigits) {
			return Recipient{}, ErrInvalidRecipient
		}
		return Recipient{Kind: RecipientLID, ID: user}, nil
	case channelServer:
		return channelRecipient(user)
	}
	return Recipient{}, ErrInvalidRecipient
}

// channelRecipient accepts a channel's id: digits not starting with 0.
func channelRecipient(id string) (Recipient, error) {
	if !plainDigits(id, 1, maxIDDigits) || id[0] == '0' {
		return Recipient{}, ErrInvalidRecipient
	}
	return Recipient{Kind: RecipientChannel, ID: id}, nil
}
