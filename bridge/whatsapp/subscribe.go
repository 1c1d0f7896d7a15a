package whatsapp

import "github.com/msgbridge/msgbridge/bridge"

// Subscribe returns a channel that receives a value after every change of the
// status or of the running link attempt's QR code, and a function that ends
// the subscription. The channel has room for one value and a send never
// blocks: a slow reader sees one pending signal for any number of changes, so
// it must re-read Status and CurrentQR on each, never count them. This keeps
// whatsmeow's event goroutine from ever waiting for a dashboard.
func (m *Manager) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	m.subMu.Lock()
	if m.subs == nil {
		m.subs = map[chan struct{}]struct{}{}
	}
	m.subs[ch] = struct{}{}
	m.subMu.Unlock()
	return ch, func() {
		m.subMu.Lock()
		delete(m.subs, ch)
		m.subMu.Unlock()
	}
}

// notify signals every subscriber without blocking.
func (m *Manager) notify() {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	for ch := range m.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending
		}
	}
}

// CurrentQR is the running link attempt's latest QR code. Unlike QR it
// never starts an attempt, so an observer can show the code without causing
// one.
func (m *Manager) CurrentQR() bridge.LinkQR {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.link == nil {
		return bridge.LinkQR{}
	}
	return bridge.LinkQR{Code: m.link.latest, Since: m.link.latestAt, Attempt: m.link.seq}
}
