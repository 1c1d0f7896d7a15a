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
	"github.com/msgbridge/msgbridge/bridge/spool"
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
	replyTo     string
	details     details // what only some types carry (details.go)
}

// outgoing is what the session needs to send m.
func (m *row) outgoing() bridge.Outgoing {
	return bridge.Outgoing{
		ID: m.WhatsAppID, Recipient: m.Recipient, Type: m.Type, Text: m.body,
		FilePath: m.filePath, FileName: m.fileName, MimeType: m.mimeType,
		ReplyTo: m.replyTo, Mentions: m.details.mentions(), PTT: m.details.PTT,
		Location: m.details.location(), Contact: m.details.contact(), Poll: m.details.poll(),
		Buttons: m.details.buttons(), Status: m.details.status(),
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
	// PTT sends an audio as a voice note.
	PTT bool
	// ReplyTo is the whatsapp_id the item quotes; empty: none.
	ReplyTo  string
	Mentions []bridge.Recipient
	Location *bridge.Location // of a location
	Contact  *bridge.ContactCard
	Poll     *bridge.Poll
	Buttons  []bridge.Button
	// Status is a status post's audience and style; nil for other messages.
	Status *bridge.StatusPost
	// Action is what a reaction, edit or revoke acts on; nil for content.
	Action *Action
}

// SpooledFile is an attachment in the spool (spool.File), as a request
// carries it.
type SpooledFile = spool.File

// Request is one validated POST /send.
type Request struct {
	Recipient      bridge.Recipient
	Items          []Item
	IdempotencyKey string // empty: none
	// AwaitApproval holds the messages as AwaitingApproval until a person
	// approves them (Approve) or rejects them (Reject): the send of a key
	// with approval.
	AwaitApproval bool
}

// validate checks what the queue relies on; the HTTP layer has already
// checked the rest (text lengths, file types).
func (r Request) validate() error {
	if r.Recipient.JID() == "" {
		return bridge.ErrInvalidRecipient
	}
	if len(r.Items) == 0 {
		return bridge.Invalid(bridge.CodeMissingType, "a request needs at least one item")
	}
	for i, it := range r.Items {
		if err := it.validate(i); err != nil {
			return err
		}
		if err := r.validateStatus(i, it); err != nil {
			return err
		}
	}
	return nil
}

// validateStatus checks that item i names its audience exactly when it is a
// status post; a status takes no reaction, edit or revoke from the bridge.
func (r Request) validateStatus(i int, it Item) error {
	toStatus := r.Recipient.Kind == bridge.RecipientStatus
	switch {
	case toStatus && it.Type.IsAction():
		return bridge.Invalid(bridge.CodeInvalidAction, "item %d: the bridge does not react to, edit or revoke a status", i)
	case (it.Status != nil) != toStatus:
		return bridge.Invalid(bridge.CodeMissingStatusRecipients, "item %d: a status post, and only it, names its recipients", i)
	}
	return nil
}

// validate checks that the item carries what its type needs.
func (it Item) validate(i int) error {
	kind, ok := it.Type.Kind()
	if !ok {
		return bridge.Invalid(bridge.CodeUnknownType, "item %d has the unknown type %q", i, it.Type)
	}
	if !it.has(kind.Part) {
		if kind.Part == bridge.PartTarget {
			return bridge.Invalid(kind.Part.MissingCode(), "item %d is %s but names no message", i, it.Type)
		}
		return bridge.Invalid(kind.Part.MissingCode(), "item %d is %s but lacks its content", i, it.Type)
	}
	for _, r := range it.Mentions {
		if r.JID() == "" {
			return bridge.Invalid(bridge.CodeInvalidMention, "item %d mentions an invalid user", i)
		}
	}
	return nil
}

// has tells whether the item carries part.
func (it Item) has(part bridge.Part) bool {
	switch part {
	case bridge.PartFile:
		return it.File != nil
	case bridge.PartLocation:
		return it.Location != nil
	case bridge.PartContact:
		return it.Contact != nil
	case bridge.PartPoll:
		return it.Poll != nil
	case bridge.PartButtons:
		return len(it.Buttons) > 0
	case bridge.PartTarget:
		return it.Action != nil && it.Action.TargetID != ""
	case bridge.PartNone:
	}
	return true
}
