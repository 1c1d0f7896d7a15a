package bridge

import "time"

// The kinds of Incoming that change an earlier message instead of being one.
const (
	IncomingReaction = "reaction" // TargetID got Emoji ("" removes it)
	IncomingEdit     = "edit"     // TargetID's text became Text
	IncomingRevoke   = "revoke"   // TargetID was deleted for everyone
)

// Incoming is a message received by the linked account, or a reaction,
// edit or revoke of one (Type IncomingReaction, IncomingEdit,
// IncomingRevoke).
type Incoming struct {
	WhatsAppID string
	// From is whom a reply goes to: the sender's phone number when it is
	// known, else its LID.
	From Recipient
	// FromLID and FromPhone are the sender's LID and phone number; either
	// is zero when unknown (a hidden number has no FromPhone).
	FromLID   Recipient
	FromPhone Recipient
	Chat      Recipient // the chat: the sender, or a group
	PushName  string
	// Type is text, image, video, audio, document, sticker, location,
	// contact, or one of the Incoming* kinds.
	Type      string
	Text      string // the body, the caption, or an edit's new text
	Timestamp time.Time
	Media     *Media
	// Quoted is the WhatsApp id of the message this one replies to.
	Quoted string
	// Mentions are the users the text mentions.
	Mentions []Recipient
	Location *Location
	Contacts []ContactCard
	// TargetID is the message a reaction, edit or revoke is about.
	TargetID string
	// Emoji is a reaction's emoji; empty when the reaction was removed.
	Emoji string
	// Votes are the names of the options a poll vote (IncomingPollVote)
	// chose, in the poll's order; empty when the voter took the vote back.
	Votes []string
	// ReplyID is the id of the button tapped or the list row picked
	// (IncomingButtonReply, IncomingListReply); Text is its title, Quoted
	// the message that offered it.
	ReplyID string
	// Truncated are the fields cut to their bounds (Bound), with their
	// whole sizes; nil when none was.
	Truncated []Cut
}

// Media describes an incoming message's attachment.
type Media struct {
	// ID names the attachment for GET /api/media/{id}; empty until the
	// media store took it on.
	ID       string
	MimeType string
	Size     uint64
	FileName string
	// SHA256 is the hex SHA-256 of the decrypted file, as the sender
	// announced it.
	SHA256 string
	// PTT marks a voice note (an audio recorded push-to-talk).
	PTT bool
	// Source is what the session needs to download the file again: opaque
	// outside the whatsapp package, stored with the media's record.
	Source []byte
}

// Location is a shared place.
type Location struct {
	Latitude  float64
	Longitude float64
	Name      string
	Address   string
}

// ContactCard is a shared contact.
type ContactCard struct {
	DisplayName string
	VCard       string
}
