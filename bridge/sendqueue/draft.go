package sendqueue

import (
	"strings"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// The one validation of what is sent. Every front door (POST /send, a form
// of items by position; POST /api/messages, one JSON message; the Cloud
// API's) reads its body into a Draft, and Validate turns it into the
// queue's Request or the first fault, each fault with its own code.

// ItemDraft is one message as a front door read it, not yet validated.
type ItemDraft struct {
	Type     string
	Text     string
	File     *SpooledFile // image, document, video, audio
	PTT      *bool        // audio: nil decides by the content
	Location *LocationDraft
	VCard    *string
	Poll     *bridge.PollDraft
	Buttons  []bridge.Button // nil: none
}

// LocationDraft is a location as a door read it.
type LocationDraft struct {
	Latitude, Longitude *float64 // nil: missing
	Name, Address       string
}

// Draft is one request as a door read it: what applies to every item, and
// the items.
type Draft struct {
	To       string
	ReplyTo  *string // nil: not a reply
	Mentions []string
	// Status is the audience and style of a status post (To is
	// bridge.StatusJID); nil: not a status.
	Status *bridge.StatusDraft
	Items  []ItemDraft
	// IdempotencyKey, checked by ParseIdempotencyKey; empty: none.
	IdempotencyKey string
}

// discard deletes the draft's spooled files, when it was refused.
func (d Draft) discard() {
	for _, it := range d.Items {
		it.File.Discard()
	}
}

// SendTypes lists the types a send takes, for error messages.
const SendTypes = "text, image, document, video, audio, location, contact, poll or buttons"

// Validate validates the whole request, all or nothing.
func (d Draft) Validate() (Request, error) {
	recipient, err := d.recipient()
	if err != nil {
		return Request{}, err
	}
	if len(d.Items) == 0 {
		return Request{}, bridge.Invalid(bridge.CodeMissingType, "name at least one item's type: "+SendTypes)
	}
	var replyTo string
	if d.ReplyTo != nil {
		if replyTo, err = bridge.ParseReplyTo(*d.ReplyTo); err != nil {
			return Request{}, err
		}
	}
	mentions, err := bridge.ParseMentions(d.Mentions)
	if err != nil {
		return Request{}, err
	}
	req := Request{Recipient: recipient, IdempotencyKey: d.IdempotencyKey, Items: make([]Item, len(d.Items))}
	for i, it := range d.Items {
		if req.Items[i], err = validateItem(i, it); err != nil {
			return Request{}, err
		}
		req.Items[i].ReplyTo, req.Items[i].Mentions = replyTo, mentions
		if req.Items[i].Status, err = d.statusOf(recipient, req.Items[i].Type); err != nil {
			return Request{}, err
		}
	}
	return req, nil
}

// recipient is d.To: a chat, or the status broadcast, which takes a status
// object and neither a quote nor mentions.
func (d Draft) recipient() (bridge.Recipient, error) {
	if strings.TrimSpace(d.To) != bridge.StatusJID {
		if d.Status != nil {
			return bridge.Recipient{}, bridge.Invalid(bridge.CodeUnexpectedStatus, "status is for a message to %s only", bridge.StatusJID)
		}
		return bridge.ParseRecipient(d.To)
	}
	if d.ReplyTo != nil || len(d.Mentions) > 0 {
		return bridge.Recipient{}, bridge.Invalid(bridge.CodeUnexpectedStatusContext, "a status quotes and mentions nobody: leave out reply_to and mentions")
	}
	if d.Status == nil {
		return bridge.Recipient{}, bridge.Invalid(bridge.CodeMissingStatusRecipients,
			"a message to %s needs status.recipients: 1 to %d phone numbers", bridge.StatusJID, bridge.MaxStatusRecipients)
	}
	return bridge.StatusBroadcast, nil
}

// statusOf is the status post of an item of type typ to recipient; nil
// when recipient is a chat.
func (d Draft) statusOf(recipient bridge.Recipient, typ bridge.MessageType) (*bridge.StatusPost, error) {
	if recipient.Kind != bridge.RecipientStatus {
		return nil, nil //nolint:nilnil // a chat's message has no status post, and that is no fault
	}
	p, err := bridge.ValidateStatus(typ, *d.Status)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// validateItem checks item i: its text, then what its type carries, and
// that it carries nothing another type would.
func validateItem(i int, d ItemDraft) (Item, error) {
	if len(d.Text) > bridge.MaxTextBytes {
		return Item{}, bridge.Invalid(bridge.CodeTextTooLong, "the text of item %d is longer than %d bytes", i, bridge.MaxTextBytes)
	}
	if !utf8.ValidString(d.Text) {
		return Item{}, bridge.Invalid(bridge.CodeInvalidText, "the text of item %d is not valid UTF-8", i)
	}
	typ := bridge.MessageType(d.Type)
	kind, known := typ.Kind()
	if err := d.unexpected(i, typ, kind, known); err != nil {
		return Item{}, err
	}
	it := Item{Type: typ, Text: d.Text, File: d.File}
	switch {
	case !known:
		return it, bridge.Invalid(bridge.CodeUnknownType, "type of item %d, %q, is not %s", i, bridge.Truncate(d.Type, 32), SendTypes)
	case kind.Action:
		return it, bridge.Invalid(bridge.CodeUnknownType, "type of item %d: %s acts on a message through /api/messages/{id}", i, typ)
	}
	switch kind.Part {
	case bridge.PartFile:
		return mediaItem(i, it, d.PTT)
	case bridge.PartLocation:
		return locationItem(i, it, d.Location)
	case bridge.PartContact:
		if d.VCard == nil {
			return it, bridge.Invalid(kind.Part.MissingCode(), "item %d is a contact but has no vcard", i)
		}
		card, err := bridge.ParseVCard(*d.VCard)
		if err != nil {
			return it, err
		}
		it.Contact = &card
	case bridge.PartPoll:
		if d.Poll == nil {
			return it, bridge.Invalid(kind.Part.MissingCode(), "item %d is a poll but has no poll", i)
		}
		poll, err := bridge.ValidatePoll(*d.Poll)
		if err != nil {
			return it, err
		}
		it.Poll = &poll
	case bridge.PartButtons:
		return buttonsItem(i, it, d.Buttons)
	case bridge.PartNone:
		if strings.TrimSpace(d.Text) == "" {
			return it, bridge.Invalid(bridge.CodeEmptyText, "item %d is text but its text is empty", i)
		}
	case bridge.PartTarget: // an action, answered above
	}
	return it, nil
}

// unexpected refuses content that typ (of kind, when known) does not
// carry.
func (d ItemDraft) unexpected(i int, typ bridge.MessageType, kind bridge.MessageKind, known bool) error {
	switch {
	case d.File != nil && kind.Part != bridge.PartFile:
		return bridge.Invalid(bridge.CodeUnexpectedFile, "item %d is %s, which carries no file", i, bridge.Truncate(d.Type, 32))
	case d.Location != nil && kind.Part != bridge.PartLocation:
		return bridge.Invalid(bridge.CodeUnexpectedLocation, "item %d is %s, not a location", i, bridge.Truncate(d.Type, 32))
	case d.VCard != nil && kind.Part != bridge.PartContact:
		return bridge.Invalid(bridge.CodeUnexpectedVcard, "item %d is %s, not a contact", i, bridge.Truncate(d.Type, 32))
	case d.Poll != nil && kind.Part != bridge.PartPoll:
		return bridge.Invalid(bridge.CodeUnexpectedPoll, "item %d is %s, not a poll", i, bridge.Truncate(d.Type, 32))
	case d.Buttons != nil && kind.Part != bridge.PartButtons:
		return bridge.Invalid(bridge.CodeUnexpectedButtons, "item %d is %s, which has no buttons", i, bridge.Truncate(d.Type, 32))
	case d.PTT != nil && typ != bridge.TypeAudio:
		return bridge.Invalid(bridge.CodeUnexpectedPtt, "item %d is %s; only audio is a voice note", i, bridge.Truncate(d.Type, 32))
	case d.Text != "" && known && !kind.Text && !kind.Action:
		return bridge.Invalid(bridge.CodeUnexpectedText, "item %d is %s, which has no text or caption", i, typ)
	}
	return nil
}

// mediaItem checks an attachment by its content (sniffed while spooling,
// never from its name): each type takes the formats WhatsApp plays.
func mediaItem(i int, it Item, ptt *bool) (Item, error) {
	if it.File == nil {
		return it, bridge.Invalid(bridge.CodeMissingFile, "item %d is %s but has no file", i, it.Type)
	}
	mimeType := it.File.MimeType
	switch it.Type {
	case bridge.TypeImage:
		if !spool.IsImage(mimeType) {
			return it, bridge.Invalid(bridge.CodeInvalidImage, "the file of item %d is %s, not a JPEG, PNG or WebP image", i, mimeType)
		}
	case bridge.TypeVideo:
		if !spool.IsVideo(mimeType) {
			return it, bridge.Invalid(bridge.CodeInvalidVideo, "the file of item %d is %s, not an MP4 or 3GP video", i, mimeType)
		}
	case bridge.TypeAudio:
		if !spool.IsAudio(mimeType) {
			return it, bridge.Invalid(bridge.CodeInvalidAudio, "the file of item %d is %s, not Ogg/Opus, MP3, M4A, AAC or AMR audio", i, mimeType)
		}
		// A voice note when asked for, or when it is what phones record.
		it.PTT = mimeType == spool.MimeOpus
		if ptt != nil {
			it.PTT = *ptt
		}
	case bridge.TypeDocument:
		if it.File.Name == "" {
			it.File.Name = "document"
		}
	default:
	}
	return it, nil
}

func locationItem(i int, it Item, l *LocationDraft) (Item, error) {
	if l == nil {
		return it, bridge.Invalid(bridge.CodeMissingLocation, "item %d is a location but has no latitude and longitude", i)
	}
	if l.Latitude == nil || l.Longitude == nil {
		return it, bridge.Invalid(bridge.CodeInvalidLocation, "the location of item %d needs both latitude and longitude", i)
	}
	loc := bridge.Location{Latitude: *l.Latitude, Longitude: *l.Longitude, Name: l.Name, Address: l.Address}
	if err := bridge.ValidateLocation(loc); err != nil {
		return it, err
	}
	it.Location = &loc
	return it, nil
}

// buttonsItem checks a text with reply buttons: the text is the body the
// buttons are under.
func buttonsItem(i int, it Item, buttons []bridge.Button) (Item, error) {
	if buttons == nil {
		return it, bridge.Invalid(bridge.PartButtons.MissingCode(), "item %d is buttons but has no buttons", i)
	}
	if strings.TrimSpace(it.Text) == "" {
		return it, bridge.Invalid(bridge.CodeEmptyText, "item %d has buttons but no text above them", i)
	}
	if err := bridge.ValidateButtons(buttons); err != nil {
		return it, err
	}
	it.Buttons = buttons
	return it, nil
}
