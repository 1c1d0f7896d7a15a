// Package dispatch is the bridge's durable send queue and message log
// (DESIGN.md section 3). A message is stored, with its WhatsApp ID chosen,
// before its first attempt; then it is attempted at once and, while it
// fails, after each delay of the retry schedule, until it is sent or Failed.
// The queue is the messages table itself: a message whose next_attempt_at is
// set is due then, so a restart picks up exactly where a crash left off.
package sendqueue

import (
	"database/sql"
	"time"
)

// Status is where a message stands. It only moves forward:
// Queued -> Sent -> Delivered -> Read, or Queued -> Failed.
type Status string

// The statuses.
const (
	StatusQueued    Status = "Queued"
	StatusSent      Status = "Sent"
	StatusDelivered Status = "Delivered"
	StatusRead      Status = "Read"
	StatusFailed    Status = "Failed"
)

// rank orders the statuses of a successful send; Failed is final and apart.
var rank = map[Status]int{StatusQueued: 0, StatusSent: 1, StatusDelivered: 2, StatusRead: 3}

// ParseStatus accepts the statuses as the API spells them.
func ParseStatus(s string) (Status, bool) {
	st := Status(s)
	_, ok := rank[st]
	return st, ok || st == StatusFailed
}

// advances reports whether to moves a message in status from forward.
func advances(from, to Status) bool {
	if from == StatusFailed || to == StatusFailed {
		return false
	}
	return rank[to] > rank[from]
}

// Message is one entry of the message log.
type Message struct {
	ID         string
	WhatsAppID string
	RequestID  string
	Position   int
	Recipient  string
	Type       string
	Status     Status
	RetryCount int
	Attempts   int
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time

	body        string
	nextAttempt sql.NullInt64 // when the next attempt is due; set by plan
	filePath    string
	fileName    string
	mimeType    string
}

// Item is one validated item of a send request.
type Item struct {
	Type string // session.KindText, KindImage or KindDocument
	Text string // body, or caption
	File *SpooledFile
}

// SpooledFile is an attachment received into DATA_DIR/spool. The queue owns
// it once the request is accepted and deletes it when the message is done.
type SpooledFile struct {
	Path     string
	Name     string
	MimeType string
	Size     int64
}

// Request is one validated POST /send.
type Request struct {
	Recipient      string // a JID
	Items          []Item
	IdempotencyKey string // empty: none
}
