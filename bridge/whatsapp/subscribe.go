package whatsapp

import "github.com/msgbridge/msgbridge/bridge"

// Subscribe returns a channel that receives a value after every change of the
// status or of the running link attempt's QR code, and a function that ends
// the subscription. A slow reader sees one pending signal for any number of
// changes (notify.Changes), so it must re-read Status and CurrentQR on each.
// This keeps whatsmeow's event goroutine from ever waiting for a dashboard.
func (m *Session) Subscribe() (<-chan struct{}, func()) { return m.changes.Subscribe() }

// notify signals every subscriber without blocking.
func (m *Session) notify() { m.changes.Notify() }

// CurrentQR is the running link attempt's latest QR code. Unlike QR it
// never starts an attempt, so an observer can show the code without causing
// one.
func (m *Session) CurrentQR() bridge.LinkQR {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.link == nil {
		return bridge.LinkQR{}
	}
	return bridge.LinkQR{Code: m.link.latest, Since: m.link.latestAt, Attempt: m.link.seq}
}
