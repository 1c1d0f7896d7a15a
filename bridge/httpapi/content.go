package httpapi

import (
	"strings"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// The one validation of what is sent. Both front doors, POST /send (a form
// of items by position) and POST /api/messages (one JSON message), read
// their bodies into drafts and a request-wide part, and validateRequest
// turns them into the queue's request or the first fault, each fault with
// its own code.

// draft is one message as a front door read it, not yet validated.
type draft struct {
	typ      string
	text     string
	file     *sendqueue.SpooledFile // image, document, video, audio
	ptt      *bool                  // audio: nil decides by the content
	location *locationDraft
	vcard    *string
}

type locationDraft struct {
	latitude, longitude *float64 // nil: missing
	name, address       string
}

// requestDraft is what applies to every item of one request.
type requestDraft struct {
	to       string
	replyTo  *string // nil: not a reply
	mentions []string
	items    []draft
}

// sendTypes lists the types a send takes, for error messages.
const sendTypes = "text, image, document, video, audio, location or contact"

// validateRequest validates the whole request, all or nothing.
func validateRequest(d requestDraft) (sendqueue.Request, error) {
	recipient, err := bridge.ParseRecipient(d.to)
	if err != nil {
		return sendqueue.Request{}, err
	}
	if len(d.items) == 0 {
		return sendqueue.Request{}, bridge.Invalid(bridge.CodeMissingType, "name at least one item's type: "+sendTypes)
	}
	var replyTo string
	if d.replyTo != nil {
		if replyTo, err = bridge.ParseReplyTo(*d.replyTo); err != nil {
			return sendqueue.Request{}, err
		}
	}
	mentions, err := bridge.ParseMentions(d.mentions)
	if err != nil {
		return sendqueue.Request{}, err
	}
	req := sendqueue.Request{Recipient: recipient, Items: make([]sendqueue.Item, len(d.items))}
	for i, it := range d.items {
		if req.Items[i], err = validateItem(i, it); err != nil {
			return sendqueue.Request{}, err
		}
		req.Items[i].ReplyTo, req.Items[i].Mentions = replyTo, mentions
	}
	return req, nil
}

// validateItem checks item i: its text, then what its type carries, and
// that it carries nothing another type would.
func validateItem(i int, d draft) (sendqueue.Item, error) {
	if len(d.text) > maxTextBytes {
		return sendqueue.Item{}, bridge.Invalid(bridge.CodeTextTooLong, "the text of item %d is longer than %d bytes", i, maxTextBytes)
	}
	if !utf8.ValidString(d.text) {
		return sendqueue.Item{}, bridge.Invalid(bridge.CodeInvalidText, "the text of item %d is not valid UTF-8", i)
	}
	typ := bridge.MessageType(d.typ)
	kind, known := typ.Kind()
	if err := d.unexpected(i, typ, kind, known); err != nil {
		return sendqueue.Item{}, err
	}
	it := sendqueue.Item{Type: typ, Text: d.text, File: d.file}
	switch {
	case !known:
		return it, bridge.Invalid(bridge.CodeUnknownType, "type of item %d, %q, is not %s", i, truncate(d.typ, 32), sendTypes)
	case kind.Action:
		return it, bridge.Invalid(bridge.CodeUnknownType, "type of item %d: %s acts on a message through /api/messages/{id}", i, typ)
	}
	switch kind.Part {
	case bridge.PartFile:
		return mediaItem(i, it, d.ptt)
	case bridge.PartLocation:
		return locationItem(i, it, d.location)
	case bridge.PartContact:
		if d.vcard == nil {
			return it, bridge.Invalid(kind.Part.MissingCode(), "item %d is a contact but has no vcard", i)
		}
		card, err := bridge.ParseVCard(*d.vcard)
		if err != nil {
			return it, err
		}
		it.Contact = &card
	case bridge.PartNone:
		if strings.TrimSpace(d.text) == "" {
			return it, bridge.Invalid(bridge.CodeEmptyText, "item %d is text but its text is empty", i)
		}
	case bridge.PartTarget: // an action, answered above
	}
	return it, nil
}

// unexpected refuses content that typ (of kind, when known) does not
// carry.
func (d draft) unexpected(i int, typ bridge.MessageType, kind bridge.MessageKind, known bool) error {
	switch {
	case d.file != nil && kind.Part != bridge.PartFile:
		return bridge.Invalid(bridge.CodeUnexpectedFile, "item %d is %s, which carries no file", i, truncate(d.typ, 32))
	case d.location != nil && kind.Part != bridge.PartLocation:
		return bridge.Invalid(bridge.CodeUnexpectedLocation, "item %d is %s, not a location", i, truncate(d.typ, 32))
	case d.vcard != nil && kind.Part != bridge.PartContact:
		return bridge.Invalid(bridge.CodeUnexpectedVcard, "item %d is %s, not a contact", i, truncate(d.typ, 32))
	case d.ptt != nil && typ != bridge.TypeAudio:
		return bridge.Invalid(bridge.CodeUnexpectedPtt, "item %d is %s; only audio is a voice note", i, truncate(d.typ, 32))
	case d.text != "" && known && !kind.Text && !kind.Action:
		return bridge.Invalid(bridge.CodeUnexpectedText, "item %d is %s, which has no text or caption", i, typ)
	}
	return nil
}

// mediaItem checks an attachment by its content (sniffed while spooling,
// never from its name): each type takes the formats WhatsApp plays.
func mediaItem(i int, it sendqueue.Item, ptt *bool) (sendqueue.Item, error) {
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

func locationItem(i int, it sendqueue.Item, l *locationDraft) (sendqueue.Item, error) {
	if l == nil {
		return it, bridge.Invalid(bridge.CodeMissingLocation, "item %d is a location but has no latitude and longitude", i)
	}
	if l.latitude == nil || l.longitude == nil {
		return it, bridge.Invalid(bridge.CodeInvalidLocation, "the location of item %d needs both latitude and longitude", i)
	}
	loc := bridge.Location{Latitude: *l.latitude, Longitude: *l.longitude, Name: l.name, Address: l.address}
	if err := bridge.ValidateLocation(loc); err != nil {
		return it, err
	}
	it.Location = &loc
	return it, nil
}
