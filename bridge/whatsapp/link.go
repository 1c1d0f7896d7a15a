package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// pairingDisplayName is how the linked device appears on the phone; whatsmeow
// requires the "Browser (OS)" form.
const pairingDisplayName = "Chrome (Linux)"

// firstCodeTimeout bounds the wait for the server's first QR code, which also
// proves the socket is ready for a pairing-code request.
const firstCodeTimeout = 30 * time.Second

// linkAttempt is one run of whatsmeow's QR channel: a connected, unlinked
// socket whose QR codes rotate until a phone links or they run out. Both link
// methods use it: a pairing code needs the same open socket.
type linkAttempt struct {
	seq    uint64        // numbers the attempts of this process from 1
	ready  chan struct{} // closed at the first QR code
	done   chan struct{} // closed when the attempt ends
	latest string        // guarded by Session.mu
	// latestAt is when latest arrived, for observers that measure how soon
	// a rotation reaches the screen; guarded by Session.mu.
	latestAt time.Time
	err      error // why it ended without a link; guarded by Session.mu
	// dropped: the socket closed while the attempt ran, so it ends for the
	// connection's sake, not the codes'; guarded by Session.mu.
	dropped bool
}

// errUnreachable: the link attempt's connection failed or broke; cause,
// when known, says how.
func errUnreachable(cause error) error {
	return &bridge.Error{
		Kind: bridge.KindUpstream, Code: bridge.CodeWhatsAppUnreachable,
		Message: "the connection to WhatsApp failed or broke before a phone linked", Err: cause,
	}
}

// QR returns the latest QR string of the running link attempt, starting one
// when none runs. It is bridge.ErrLinked when an account is linked.
func (m *Session) QR(ctx context.Context) (string, error) {
	link, err := m.ensureLink(ctx)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if link.latest == "" {
		return "", link.err
	}
	return link.latest, nil
}

// PairingCode asks WhatsApp for the 8-character code that links the account
// of phone (digits with country code) when entered on that phone.
func (m *Session) PairingCode(ctx context.Context, phone string) (string, error) {
	if _, err := m.ensureLink(ctx); err != nil {
		return "", err
	}
	code, err := m.client.Load().PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, pairingDisplayName)
	if err != nil {
		return "", fmt.Errorf("request pairing code: %w", err)
	}
	return strings.ReplaceAll(code, "-", ""), nil
}

// ensureLink returns the running link attempt, or starts one, once its first
// QR code has arrived.
func (m *Session) ensureLink(ctx context.Context) (*linkAttempt, error) {
	link, err := m.startLink()
	if err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeout(ctx, firstCodeTimeout)
	defer cancel()
	select {
	case <-link.ready:
		return link, nil
	case <-link.done:
		m.mu.Lock()
		defer m.mu.Unlock()
		return nil, link.err
	case <-wait.Done():
		return nil, fmt.Errorf("waiting for the first QR code: %w", wait.Err())
	}
}

func (m *Session) startLink() (*linkAttempt, error) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if m.linked.Load() {
		return nil, bridge.ErrLinked
	}
	m.mu.Lock()
	link := m.link
	m.mu.Unlock()
	if link != nil {
		return link, nil
	}
	cli := m.client.Load()
	// GetQRChannel must come before Connect, and both outlive this request.
	codes, err := cli.GetQRChannel(m.bgCtx)
	if err != nil {
		return nil, fmt.Errorf("start link: %w", err)
	}
	link = &linkAttempt{ready: make(chan struct{}), done: make(chan struct{})}
	m.mu.Lock()
	m.linkSeq++
	link.seq = m.linkSeq
	m.link = link
	m.applyLocked(linkStarted{})
	m.mu.Unlock()
	go m.followLink(link, codes)
	if err := cli.ConnectContext(m.bgCtx); err != nil {
		err = errUnreachable(err)
		m.finishLink(link, err, contract.ReasonNetwork)
		return nil, err
	}
	return link, nil
}

// followLink tracks the QR channel until the attempt ends.
func (m *Session) followLink(link *linkAttempt, codes <-chan whatsmeow.QRChannelItem) {
	for item := range codes {
		switch {
		case item.Event == whatsmeow.QRChannelEventCode:
			m.mu.Lock()
			first := link.latest == ""
			link.latest, link.latestAt = item.Code, m.opts.Now()
			m.notify()
			m.mu.Unlock()
			if first {
				close(link.ready)
			}
		case item == whatsmeow.QRChannelSuccess:
			m.finishLink(link, nil, contract.ReasonNone)
			return
		case item == whatsmeow.QRChannelTimeout:
			m.linkTimedOut(link)
			return
		default:
			err := item.Error
			if err == nil {
				err = fmt.Errorf("link attempt ended: %s", item.Event)
			}
			m.finishLink(link, err, contract.ReasonPairError)
			return
		}
	}
	m.finishLink(link, errors.New("link attempt ended"), contract.ReasonPairError)
}

// linkTimedOut ends link on the QR channel's timeout, which whatsmeow also
// sends when the socket closes: a failed connect (WhatsApp unreachable; the
// background reconnect of an unlinked client gives up at once) or a broken
// one. Those are network failures, not expired codes.
func (m *Session) linkTimedOut(link *linkAttempt) {
	m.mu.Lock()
	dropped := link.dropped
	m.mu.Unlock()
	if dropped {
		m.finishLink(link, errUnreachable(nil), contract.ReasonNetwork)
		return
	}
	m.finishLink(link, errors.New("the QR codes expired before a phone linked"), contract.ReasonQRTimeout)
}

// linkDropped records that the socket closed under the running link
// attempt. whatsmeow gives the Disconnected event to this package's handler
// before the QR channel's, which was registered later.
func (m *Session) linkDropped() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.link != nil {
		m.link.dropped = true
	}
}

// finishLink ends link once; reason tells the state policy why (it ignores
// the end when the link succeeded).
func (m *Session) finishLink(link *linkAttempt, err error, reason bridge.Reason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-link.done:
		return
	default:
	}
	link.err = err
	close(link.done)
	if m.link == link {
		m.link = nil
		m.notify() // CurrentQR is now empty
	}
	if err != nil {
		m.applyLocked(linkEnded{reason: reason})
	}
}

// endLink abandons the running attempt, if any (logout, reset).
func (m *Session) endLink() {
	m.mu.Lock()
	link := m.link
	m.mu.Unlock()
	if link != nil {
		m.finishLink(link, errors.New("link attempt cancelled"), contract.ReasonNone)
	}
}
