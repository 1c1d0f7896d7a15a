// Package fakes holds the test doubles of the bridge's ports that more than
// one package's tests need, written once: each answers with its fields and
// records what it was asked. A double that only one package needs stays in
// that package's tests.
package fakes

import (
	"context"
	"fmt"
	"sync"

	"github.com/msgbridge/msgbridge/bridge"
)

// Session is a fake of bridge.Session, the WhatsApp link. Set its fields
// before the code under test runs, or with Set while it runs.
type Session struct {
	mu sync.Mutex
	// Link is what Status answers.
	Link bridge.SessionStatus
	// Err is the error of QR, PairingCode, Groups, Logout and Send.
	Err error
	// QRCode and Code are the answers of QR and PairingCode.
	QRCode, Code string
	// GroupList is the answer of Groups.
	GroupList []bridge.Group
	// NotReady makes Ready false.
	NotReady bool

	pairing []string
	sent    []bridge.Outgoing
	ids     int
}

var _ bridge.Session = (*Session)(nil)

// Set changes the fake's fields while the code under test may read them.
func (s *Session) Set(change func(*Session)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change(s)
}

// Status answers Link.
func (s *Session) Status() bridge.SessionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Link
}

// Subscribe returns a subscription that never signals.
func (s *Session) Subscribe() (<-chan struct{}, func()) { return make(chan struct{}), func() {} }

// CurrentQR answers no QR.
func (s *Session) CurrentQR() bridge.LinkQR { return bridge.LinkQR{} }

// QR answers QRCode and Err.
func (s *Session) QR(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.QRCode, s.Err
}

// PairingCode records phone and answers Code and Err.
func (s *Session) PairingCode(_ context.Context, phone string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairing = append(s.pairing, phone)
	return s.Code, s.Err
}

// Groups answers GroupList and Err.
func (s *Session) Groups(context.Context) ([]bridge.Group, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.GroupList, s.Err
}

// Logout answers Err.
func (s *Session) Logout(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Err
}

// NewMessageID returns 3EB0TEST0001, 3EB0TEST0002, …
func (s *Session) NewMessageID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("3EB0TEST%04d", s.ids)
}

// Ready is true unless NotReady.
func (s *Session) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.NotReady
}

// Send records out and answers Err.
func (s *Session) Send(_ context.Context, out bridge.Outgoing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, out)
	return s.Err
}

// Paired returns the numbers PairingCode was asked for, in order.
func (s *Session) Paired() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.pairing...)
}

// Sent returns what Send was given, in order.
func (s *Session) Sent() []bridge.Outgoing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bridge.Outgoing(nil), s.sent...)
}
