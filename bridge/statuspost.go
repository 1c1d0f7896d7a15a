package bridge

import (
	"strconv"
	"strings"
)

// StatusJID is the address of WhatsApp's status broadcast: a status (a
// "story") is a message to it, and a contact's status arrives from it.
const StatusJID = "status@broadcast"

// StatusBroadcast is the status broadcast as a recipient: the chat of the
// account's status posts in the message log, and of contacts' status
// updates.
var StatusBroadcast = Recipient{Kind: RecipientStatus, ID: "status"}

// MaxStatusRecipients bounds the audience of one status post. WhatsApp's own
// broadcast lists stop at 256 contacts; a status is sent with a sender key
// that goes to every device of every recipient, so a longer list makes one
// send of thousands of encryptions, which WhatsApp sees as bulk sending.
const MaxStatusRecipients = 256

// IsStatus reports whether in is a contact's status update: its Chat is
// StatusBroadcast, its Type text, image or video.
func (in Incoming) IsStatus() bool { return in.Chat.Kind == RecipientStatus }

// StatusPost is who sees a status and how a text status looks.
type StatusPost struct {
	// Recipients are the phone numbers the status goes to.
	Recipients []Recipient
	// BackgroundARGB is a text status's background colour (alpha, red,
	// green, blue); 0: the app's default.
	BackgroundARGB uint32
	// Font is a text status's typeface, by WhatsApp's number (StatusFonts);
	// nil: the app's default.
	Font *int
}

// StatusDraft is a status post as a door read it.
type StatusDraft struct {
	Recipients      []string
	BackgroundColor *string // "#RRGGBB" or "#AARRGGBB"; nil: default
	Font            *string // a name of StatusFonts; nil: default
}

// StatusFonts are the typefaces of a text status, by the names the API
// takes, with the numbers WhatsApp's ExtendedTextMessage carries.
var StatusFonts = map[string]int{
	"system": 0, "system_text": 1, "fb_script": 2, "system_bold": 6,
	"morningbreeze_regular": 7, "calistoga_regular": 8, "exo2_extrabold": 9, "courierprime_bold": 10,
}

// StatusFontNames lists StatusFonts' names in WhatsApp's order, for error
// messages and the API description.
const StatusFontNames = "system, system_text, fb_script, system_bold, morningbreeze_regular, calistoga_regular, exo2_extrabold or courierprime_bold"

// StatusTypes are the message types a status may be.
func StatusTypes() []MessageType { return []MessageType{TypeText, TypeImage, TypeVideo} }

// ValidateStatus checks a status post of type typ, each fault with its own
// code: 1 to MaxStatusRecipients distinct phone numbers, a colour in hex
// and a known font, and those two only on a text.
func ValidateStatus(typ MessageType, d StatusDraft) (StatusPost, error) {
	switch typ {
	case TypeText, TypeImage, TypeVideo:
	default:
		return StatusPost{}, Invalid(CodeInvalidStatusType, "a status is text, image or video, not %s", Truncate(string(typ), 32))
	}
	recipients, err := statusRecipients(d.Recipients)
	if err != nil {
		return StatusPost{}, err
	}
	p := StatusPost{Recipients: recipients}
	if (d.BackgroundColor != nil || d.Font != nil) && typ != TypeText {
		return StatusPost{}, Invalid(CodeUnexpectedStatusStyle, "background_color and font style a text status, not %s", typ)
	}
	if d.BackgroundColor != nil {
		if p.BackgroundARGB, err = ParseARGB(*d.BackgroundColor); err != nil {
			return StatusPost{}, err
		}
	}
	if d.Font != nil {
		font, ok := StatusFonts[*d.Font]
		if !ok {
			return StatusPost{}, Invalid(CodeInvalidFont, "font must be %s", StatusFontNames)
		}
		p.Font = &font
	}
	return p, nil
}

// statusRecipients are the audience's phone numbers, normalised: at least
// one, at most MaxStatusRecipients, each once.
func statusRecipients(numbers []string) ([]Recipient, error) {
	if len(numbers) == 0 {
		return nil, Invalid(CodeMissingStatusRecipients, "a status needs recipients: 1 to %d phone numbers", MaxStatusRecipients)
	}
	if len(numbers) > MaxStatusRecipients {
		return nil, Invalid(CodeTooManyStatusRecipients, "a status goes to at most %d recipients, not %d", MaxStatusRecipients, len(numbers))
	}
	seen := make(map[string]bool, len(numbers))
	out := make([]Recipient, 0, len(numbers))
	for i, n := range numbers {
		digits, err := NormalizePhone(n)
		if err != nil {
			return nil, Invalid(CodeInvalidStatusRecipient, "recipients[%d] must be a phone number with country code", i)
		}
		if seen[digits] {
			return nil, Invalid(CodeDuplicateStatusRecipient, "recipients[%d] repeats %s", i, digits)
		}
		seen[digits] = true
		out = append(out, PhoneRecipient(digits))
	}
	return out, nil
}

// ParseARGB reads a colour "#RRGGBB" (opaque) or "#AARRGGBB" as WhatsApp's
// ARGB number.
func ParseARGB(s string) (uint32, error) {
	hex, ok := strings.CutPrefix(s, "#")
	if !ok || (len(hex) != 6 && len(hex) != 8) {
		return 0, errInvalidColor
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil {
		return 0, errInvalidColor
	}
	if len(hex) == 6 {
		v |= 0xFF000000
	}
	return uint32(v), nil
}

// FormatARGB is the colour of ParseARGB as "#AARRGGBB".
func FormatARGB(v uint32) string {
	return "#" + strings.ToUpper(strconv.FormatUint(uint64(v)|1<<32, 16)[1:])
}

var errInvalidColor = Invalid(CodeInvalidBackgroundColor, `background_color must be "#RRGGBB" or "#AARRGGBB" in hex`)

// FontName is the name of StatusFonts for WhatsApp's number; "" when unknown.
func FontName(n int) string {
	for name, v := range StatusFonts {
		if v == n {
			return name
		}
	}
	return ""
}
