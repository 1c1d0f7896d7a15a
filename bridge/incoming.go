package bridge

import "time"

// Incoming is a message received by the linked account.
type Incoming struct {
	WhatsAppID string
	From       Recipient // the sender
	Chat       Recipient // the chat: the sender, or a group
	PushName   string
	Type       string // text, image, document, video, audio, sticker, …
	Text       string // the body, or the caption
	Timestamp  time.Time
	Media      *Media
}

// Media describes an incoming message's attachment.
type Media struct {
	MimeType string
	Size     uint64
	FileName string
}
