package bridge

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of what an outgoing message carries besides its text.
const (
	// MaxMentions: a group has at most 1024 members.
	MaxMentions = 1024
	// maxWhatsAppID: WhatsApp's ids are 16-32 characters; room for others.
	maxWhatsAppID = 64
	// maxPlaceField bounds a location's name and address.
	maxPlaceField = 1024
	// MaxVCardBytes bounds a contact card.
	MaxVCardBytes = 64 << 10
	// MaxTextBytes is WhatsApp's own limit on a message body.
	MaxTextBytes = 65536
)

// Truncate cuts s to at most runes runes, so that an error message can
// quote what a client sent without growing with it.
func Truncate(s string, runes int) string {
	if utf8.RuneCountInString(s) <= runes {
		return s
	}
	return string([]rune(s)[:runes])
}

// Quoted is what is known of the message a reply quotes: who sent it and
// its text, so that the recipient's phone can show the quote.
type Quoted struct {
	// Sender sent it; the zero Recipient is the linked account itself.
	Sender Recipient
	Text   string // its text or caption; empty when unknown or none
	// Type is what it was when received ("image", "video", "audio",
	// "document", …), with its media type: a reply quotes a photo as a
	// photo. Empty for a text, and for what the bridge sent.
	Type     string
	MimeType string
}

// ValidWhatsAppID reports a well-formed WhatsApp message id: 1-64 ASCII
// letters and digits (phones and WhatsApp Web make hex ids such as
// 3EB0C767D26A1D8A).
func ValidWhatsAppID(id string) bool {
	if id == "" || len(id) > maxWhatsAppID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// ParseReplyTo validates the whatsapp_id a message replies to.
func ParseReplyTo(id string) (string, error) {
	if !ValidWhatsAppID(id) {
		return "", Invalid(CodeInvalidReplyTo, "reply_to must be a whatsapp_id: 1-%d letters and digits", maxWhatsAppID)
	}
	return id, nil
}

// ParseMentions reads the users a message mentions: phone numbers with
// their country code (as number accepts them) or LID JIDs, each once.
func ParseMentions(raw []string) ([]Recipient, error) {
	if len(raw) > MaxMentions {
		return nil, Invalid(CodeInvalidMention, "at most %d mentions", MaxMentions)
	}
	out := make([]Recipient, 0, len(raw))
	seen := make(map[Recipient]bool, len(raw))
	for i, s := range raw {
		r, err := ParseRecipient(s)
		if err != nil || r.Kind == RecipientGroup {
			return nil, Invalid(CodeInvalidMention, "mentions[%d] must be a phone number with country code or a LID JID", i)
		}
		if seen[r] {
			return nil, Invalid(CodeInvalidMention, "mentions[%d] repeats %s", i, r)
		}
		seen[r] = true
		out = append(out, r)
	}
	return out, nil
}

// ParseCoordinate reads a latitude (limit 90) or longitude (limit 180) as
// a plain decimal number: digits, an optional sign and fraction; no
// exponent, hex, infinity or NaN, which strconv would also take.
func ParseCoordinate(s string, limit float64) (float64, bool) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, hasFrac := strings.Cut(digits, ".")
	if whole == "" || len(whole) > 3 || len(frac) > 17 || (hasFrac && frac == "") ||
		!plainDigits(whole, 1, 3) || (frac != "" && !plainDigits(frac, 1, 17)) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !ValidCoordinate(v, limit) {
		return 0, false
	}
	return v, true
}

// ValidCoordinate reports a finite v within [-limit, limit].
func ValidCoordinate(v, limit float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= -limit && v <= limit
}

// ValidateLocation checks a place to share: latitude within ±90, longitude
// within ±180, name and address valid UTF-8 of at most 1024 characters.
func ValidateLocation(l Location) error {
	if !ValidCoordinate(l.Latitude, 90) {
		return Invalid(CodeInvalidLocation, "latitude must be a number from -90 to 90")
	}
	if !ValidCoordinate(l.Longitude, 180) {
		return Invalid(CodeInvalidLocation, "longitude must be a number from -180 to 180")
	}
	for field, v := range map[string]string{"name": l.Name, "address": l.Address} {
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > maxPlaceField || strings.ContainsRune(v, 0) {
			return Invalid(CodeInvalidLocation, "the location's %s must be UTF-8 text of at most %d characters", field, maxPlaceField)
		}
	}
	return nil
}

// ParseVCard validates one vCard (RFC 6350, or the 2.1 and 3.0 forms phones
// still write) and returns it as a contact card named by its FN property.
// It must be valid UTF-8, begin with BEGIN:VCARD, end with END:VCARD, hold
// no second card, and carry a VERSION and a non-empty FN.
func ParseVCard(raw string) (ContactCard, error) {
	bad := func(why string) (ContactCard, error) {
		return ContactCard{}, Invalid(CodeInvalidVcard, "vcard %s", why)
	}
	if len(raw) > MaxVCardBytes {
		return bad("is larger than 64 KiB")
	}
	if !utf8.ValidString(raw) || strings.ContainsRune(raw, 0) {
		return bad("must be UTF-8 text")
	}
	lines := unfoldVCard(raw)
	if len(lines) < 2 || !strings.EqualFold(lines[0], "BEGIN:VCARD") || !strings.EqualFold(lines[len(lines)-1], "END:VCARD") {
		return bad("must begin with BEGIN:VCARD and end with END:VCARD")
	}
	var version, name string
	for _, line := range lines[1 : len(lines)-1] {
		prop, value, ok := strings.Cut(line, ":")
		if !ok || prop == "" {
			return bad("has a line that is not NAME:value")
		}
		switch key, _, _ := strings.Cut(strings.ToUpper(prop), ";"); key {
		case "BEGIN", "END":
			return bad("must hold exactly one card")
		case "VERSION":
			version = value
		case "FN":
			name = unescapeVCard(value)
		}
	}
	if version != "2.1" && version != "3.0" && version != "4.0" {
		return bad("needs VERSION 2.1, 3.0 or 4.0")
	}
	if strings.TrimSpace(name) == "" {
		return bad("needs a non-empty FN (the name shown)")
	}
	return ContactCard{DisplayName: strings.TrimSpace(name), VCard: raw}, nil
}

// unfoldVCard splits a card into its logical lines: CRLF or LF ends a
// line, and a line starting with a space or tab continues the one before.
// Empty lines are dropped.
func unfoldVCard(raw string) []string {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n") {
		switch {
		case l == "":
		case (l[0] == ' ' || l[0] == '\t') && len(lines) > 0:
			lines[len(lines)-1] += l[1:]
		default:
			lines = append(lines, l)
		}
	}
	return lines
}

var vcardEscapes = strings.NewReplacer(`\n`, " ", `\N`, " ", `\,`, ",", `\;`, ";", `\\`, `\`)

func unescapeVCard(v string) string { return vcardEscapes.Replace(v) }
