package bridge

import "time"

// MessageType is what an outgoing message carries.
type MessageType string

// The outgoing types.
const (
	TypeText     MessageType = "text"
	TypeImage    MessageType = "image"
	TypeDocument MessageType = "document"
)

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
}

// Receipt is WhatsApp's word that messages reached a status (Delivered or
// Read) on the recipient's phone.
type Receipt struct {
	WhatsAppIDs []string
	Status      Status
}
