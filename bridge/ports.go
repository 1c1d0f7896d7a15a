package bridge

import "context"

// Session is the linked WhatsApp account as the rest of the bridge uses it.
// The whatsapp package implements it; the HTTP API, the dashboard and the
// send queue each declare the subset they need.
type Session interface {
	Status() SessionStatus
	// Subscribe signals (without blocking the sender) every change of the
	// status or of the current QR code; cancel ends the subscription.
	Subscribe() (changes <-chan struct{}, cancel func())
	CurrentQR() LinkQR
	QR(ctx context.Context) (string, error)
	PairingCode(ctx context.Context, phone string) (string, error)
	Groups(ctx context.Context) ([]Group, error)
	Logout(ctx context.Context) error
	// NewMessageID returns a fresh WhatsApp message ID.
	NewMessageID() string
	// Ready reports a session that can send now; while it is false every
	// Send fails with ErrNotLinked.
	Ready() bool
	Send(ctx context.Context, out Outgoing) error
}
