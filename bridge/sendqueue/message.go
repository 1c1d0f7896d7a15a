// Package sendqueue is the bridge's durable send queue and message log.
// A message is stored, with its WhatsApp ID chosen, before its first attempt; then it is attempted at once and, while it
// fails, after each delay of the retry schedule, until it is sent or Failed.
// The queue is the messages table itself: a message whose next_attempt_at is
// set is due then, so a restart picks up exactly where a crash left off.
//
// The Log (NewLog) reads the messages and applies receipts and needs no
// Sender; the Queue (New) stores, attempts and retries them through a
// Sender, on a Log. So the wiring is: the log, the session with the log as
// its receipts target, then the queue sending through the session.
package sendqueue

import (
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
)

// row is a message as the queue keeps it: the domain's view plus what only
// the queue needs to send it again.
type row struct {
	bridge.Message
	requestID   string
	position    int
	body        string
	nextAttempt sql.NullInt64 // when the next attempt is due; set by plan
	filePath    string
	fileName    string
	mimeType    string
}

// outgoing is what the session needs to send m.
func (m *row) outgoing() bridge.Outgoing {
	return bridge.Outgoing{
		ID: m.WhatsAppID, Recipient: m.Recipient, Type: m.Type, Text: m.body,
		FilePath: m.filePath, FileName: m.fileName, MimeType: m.mimeType,
	}
}

// messages returns the domain's view of rows.
func messages(rows []row) []bridge.Message {
	out := make([]bridge.Message, len(rows))
	for i := range rows {
		out[i] = rows[i].Message
	}
	return out
}

// Item is one validated item of a send request.
type Item struct {
	Type bridge.MessageType
	Text string // body, or caption
	File *SpooledFile
	// Action is what a reaction, edit or revoke acts on; nil for content.
	Action *Action
}

// SpooledFile is an attachment received into DATA_DIR/spool. The queue owns
// it once the request is accepted and deletes it when the message is done.
type SpooledFile struct {
	Path     string
	Name     string
	MimeType string
	Size     int64
	// SHA256 is the hex SHA-256 of the file's content. The HTTP layer can
	// fill it for free while spooling (an io.MultiWriter); when it is empty
	// and the request has an Idempotency-Key, Submit reads the file to
	// compute it, since a reused key is matched against the request's
	// content (see requestHash).
	SHA256 string
}

// Request is one validated POST /send.
type Request struct {
	Recipient      bridge.Recipient
	Items          []Item
	IdempotencyKey string // empty: none
}

// validate checks what the queue relies on; the HTTP layer has already
// checked the rest (text lengths, file types).
func (r Request) validate() error {
	if r.Recipient.JID() == "" {
		return bridge.ErrInvalidRecipient
	}
	if len(r.Items) == 0 {
		return bridge.Invalid("missing_type", "a request needs at least one item")
	}
	for i, it := range r.Items {
		switch it.Type {
		case bridge.TypeText:
		case bridge.TypeImage, bridge.TypeDocument:
			if it.File == nil {
				return bridge.Invalid("missing_file", "item %d is %s but has no file", i, it.Type)
			}
		case bridge.TypeReaction, bridge.TypeEdit, bridge.TypeRevoke:
			if it.Action == nil || it.Action.TargetID == "" {
				return bridge.Invalid("missing_target", "item %d is %s but names no message", i, it.Type)
			}
		default:
			return bridge.Invalid("unknown_type", "item %d has type %q, not text, image or document", i, it.Type)
		}
	}
	return nil
}
