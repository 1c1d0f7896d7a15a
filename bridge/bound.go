package bridge

import (
	"strconv"
	"unicode/utf8"
)

// The bounds of what a contact sends, before anything of it is stored or
// fanned out: whatsmeow hands over whatever the sender's client put in
// the message, and one 12 MB text took a bridge from 20 to 323 MB and its
// bridge.db by up to 157 MB. A text is bounded as a sent one is.
const (
	// MaxIncomingText bounds a text, a caption and an edit's new text, as
	// POST /api/messages bounds a sent text.
	MaxIncomingText = 64 << 10
	// MaxIncomingVCard bounds one shared contact's vCard.
	MaxIncomingVCard = 64 << 10
	// maxIncomingName bounds the short texts: a push name, a file name,
	// a contact's display name, a place's name and address, a button's id.
	maxIncomingName = 1 << 10
	// maxIncomingID bounds the ids a message names (its own, the one it
	// quotes or acts on) and a MIME type.
	maxIncomingID = 256
	// maxIncomingEmoji bounds a reaction: an emoji is a few code points.
	maxIncomingEmoji = 64
	// MaxIncomingContacts and maxIncomingMentions bound the lists.
	MaxIncomingContacts = 64
	maxIncomingMentions = 1024
)

// Cut is a field of an incoming message that was cut to its bound: Field
// names it as the events do ("text", "contacts[0].vcard", "contacts"),
// Size is its whole size, in bytes (in entries for a list).
type Cut struct {
	Field string
	Size  int
}

// Bound cuts every field of in that passes its bound and records each cut
// in in.Truncated; a message within its bounds is left as it is.
func (in *Incoming) Bound() {
	in.cutText("whatsapp_id", &in.WhatsAppID, maxIncomingID)
	in.cutText("push_name", &in.PushName, maxIncomingName)
	in.cutText("text", &in.Text, MaxIncomingText)
	in.cutText("quoted", &in.Quoted, maxIncomingID)
	in.cutText("target_id", &in.TargetID, maxIncomingID)
	in.cutText("emoji", &in.Emoji, maxIncomingEmoji)
	in.cutText("reply_id", &in.ReplyID, maxIncomingName)
	if m := in.Media; m != nil {
		in.cutText("media.file_name", &m.FileName, maxIncomingName)
		in.cutText("media.mime_type", &m.MimeType, maxIncomingID)
	}
	if l := in.Location; l != nil {
		in.cutText("location.name", &l.Name, maxIncomingName)
		in.cutText("location.address", &l.Address, maxIncomingName)
	}
	if n := len(in.Contacts); n > MaxIncomingContacts {
		in.Contacts = in.Contacts[:MaxIncomingContacts]
		in.Truncated = append(in.Truncated, Cut{Field: "contacts", Size: n})
	}
	for i := range in.Contacts {
		c := &in.Contacts[i]
		in.cutText(indexed("contacts", i, "display_name"), &c.DisplayName, maxIncomingName)
		in.cutText(indexed("contacts", i, "vcard"), &c.VCard, MaxIncomingVCard)
	}
	if n := len(in.Mentions); n > maxIncomingMentions {
		in.Mentions = in.Mentions[:maxIncomingMentions]
		in.Truncated = append(in.Truncated, Cut{Field: "mentions", Size: n})
	}
}

// cutText cuts *s to at most limit bytes, at a character's start, and
// records the cut.
func (in *Incoming) cutText(field string, s *string, limit int) {
	if len(*s) <= limit {
		return
	}
	in.Truncated = append(in.Truncated, Cut{Field: field, Size: len(*s)})
	end := limit
	for end > 0 && !utf8.RuneStart((*s)[end]) {
		end--
	}
	// A copy: the cut string must not keep the whole one's memory alive.
	*s = string([]byte((*s)[:end]))
}

func indexed(list string, i int, field string) string {
	return list + "[" + strconv.Itoa(i) + "]." + field
}
