package bridge

import "time"

// MessageType is what an outgoing message carries.
type MessageType string

// The outgoing types: contents, then actions on an earlier message (by its
// TargetID), which are queued and logged like contents.
const (
	TypeText     MessageType = "text"
	TypeImage    MessageType = "image"
	TypeDocument MessageType = "document"
	TypeVideo    MessageType = "video"
	TypeAudio    MessageType = "audio"
	TypeLocation MessageType = "location"
	TypeContact  MessageType = "contact"
	TypeReaction MessageType = "reaction"
	TypeEdit     MessageType = "edit"
	TypeRevoke   MessageType = "revoke"
	TypePoll     MessageType = "poll"
	TypeButtons  MessageType = "buttons"
)

// MessageTypes lists every outgoing type, in the order the API documents
// them; the schema's CHECK and the API description are tested against it.
var MessageTypes = []MessageType{
	TypeText, TypeImage, TypeDocument, TypeVideo, TypeAudio, TypeLocation,
	TypeContact, TypeReaction, TypeEdit, TypeRevoke, TypePoll,
	TypeButtons,
}

// Message is one entry of the outgoing message log.
type Message struct {
	ID         string // the log's id
	WhatsAppID string // chosen before the first attempt, so a resend is the same message
	Recipient  Recipient
	Type       MessageType
	Status     Status
	RetryCount int // retries needed so far (0-len(schedule))
	Attempts   int
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Outgoing is one message for WhatsApp, as the session sends it.
type Outgoing struct {
	// ID is the WhatsApp message ID, chosen before the first attempt so that
	// a resend after a crash is the same message to WhatsApp and the phone.
	ID        string
	Recipient Recipient
	Type      MessageType
	Text      string // the body of a text, the caption of media
	// For media: the spooled file, its name and sniffed type.
	FilePath string
	FileName string
	MimeType string
	// PTT sends an audio as a voice note.
	PTT bool
	// ReplyTo is the WhatsApp id of the message this one quotes.
	ReplyTo  string
	Mentions []Recipient
	Location *Location
	Contact  *ContactCard
	// TargetID is the WhatsApp id a reaction, edit or revoke acts on; Emoji
	// is a reaction's (empty removes it), Text an edit's new text.
	TargetID string
	Emoji    string
	// TargetSender is who sent the target when someone else did (a reaction
	// to a received message); zero for the account's own message.
	TargetSender Recipient
	// Poll is a poll's question and options.
	Poll *Poll
	// Buttons are the reply buttons under a text (TypeButtons).
	Buttons []Button
	// Status is the audience and style of a status post (Recipient is
	// StatusBroadcast); nil for any other message.
	Status *StatusPost
}

// Receipt is WhatsApp's word that messages reached a status (Delivered or
// Read) on the recipient's phone.
type Receipt struct {
	WhatsAppIDs []string
	Status      Status
}
