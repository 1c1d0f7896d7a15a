package whatsapp

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// BlockEvents hears the contacts the account blocks and unblocks, through
// the API or on its phone. BlockChanged runs before WhatsApp's
// notification is acked: an error refuses the ack, and WhatsApp delivers
// it again.
type BlockEvents interface {
	BlockChanged(ctx context.Context, c bridge.BlockChange) error
}

// blockList is the session's copy of WhatsApp's block list: loaded at each
// login, then kept by the API's own changes and by WhatsApp's blocklist
// notifications (the phone's). A contact is named by its LID and, when
// known, its phone number; both are keys of byJID.
type blockList struct {
	mu      sync.Mutex
	loaded  bool
	entries []bridge.BlockedContact
	byJID   map[string]bool
}

// Blocked reports whether the account blocked r (as last known); a session
// that has not read the list yet knows of no block.
func (m *Session) Blocked(r bridge.Recipient) bool {
	if r.Kind != bridge.RecipientPhone && r.Kind != bridge.RecipientLID {
		return false
	}
	m.blocks.mu.Lock()
	defer m.blocks.mu.Unlock()
	return m.blocks.byJID[r.JID()]
}

func (m *Session) blocklistLoaded() bool {
	m.blocks.mu.Lock()
	defer m.blocks.mu.Unlock()
	return m.blocks.loaded
}

// Blocklist answers the account's block list: the copy read at login, or
// WhatsApp's answer when none was read yet.
func (m *Session) Blocklist(ctx context.Context) ([]bridge.BlockedContact, error) {
	m.blocks.mu.Lock()
	if m.blocks.loaded {
		defer m.blocks.mu.Unlock()
		return slices.Clone(m.blocks.entries), nil
	}
	m.blocks.mu.Unlock()
	cli, err := m.readyClient()
	if err != nil {
		return nil, err
	}
	if err := m.reloadBlocklist(ctx, cli, false); err != nil {
		return nil, err
	}
	return m.Blocklist(ctx)
}

// SetBlocked blocks (or unblocks) contact r on WhatsApp, and reports the
// change (contact.blocked) when it is one.
func (m *Session) SetBlocked(ctx context.Context, r bridge.Recipient, blocked bool) error {
	cli, err := m.readyClient()
	if err != nil {
		return err
	}
	jid, err := types.ParseJID(r.JID())
	if err != nil || (r.Kind != bridge.RecipientPhone && r.Kind != bridge.RecipientLID) {
		return bridge.ErrInvalidRecipient
	}
	action := events.BlocklistChangeActionUnblock
	if blocked {
		action = events.BlocklistChangeActionBlock
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	list, err := cli.UpdateBlocklist(ctx, jid, action)
	if err != nil {
		return sendFailed(ctx, fmt.Errorf("update blocklist: %w", err))
	}
	return m.replaceBlocklist(ctx, cli, list.JIDs, bridge.BlockedByAPI)
}

// loadBlocklist reads the block list after a login; the changes since the
// last read (made while the link was down) are reported, the first read of
// the process reports none.
func (m *Session) loadBlocklist(cli *whatsmeow.Client) {
	ctx, cancel := context.WithTimeout(m.bgCtx, m.sendTimeout())
	defer cancel()
	if err := m.reloadBlocklist(ctx, cli, true); err != nil {
		m.log.Error(err, "read the block list")
	}
}

func (m *Session) reloadBlocklist(ctx context.Context, cli *whatsmeow.Client, report bool) error {
	list, err := cli.GetBlocklist(ctx)
	if err != nil {
		return fmt.Errorf("get blocklist: %w", err)
	}
	m.blocks.mu.Lock()
	first := !m.blocks.loaded
	m.blocks.mu.Unlock()
	if first || !report {
		m.blocks.set(m.blockedContacts(ctx, cli, list.JIDs))
		return nil
	}
	return m.replaceBlocklist(ctx, cli, list.JIDs, bridge.BlockedByPhone)
}

// blocklistEvent applies WhatsApp's blocklist notification (the phone
// blocked or unblocked someone); false refuses its ack.
func (m *Session) blocklistEvent(cli *whatsmeow.Client, e *events.Blocklist) bool {
	if e.Action == events.BlocklistActionModify || len(e.Changes) == 0 {
		// The whole list is to be read again: not on whatsmeow's event
		// goroutine, which the answer would wait behind.
		go m.loadBlocklist(cli)
		return true
	}
	m.blocks.mu.Lock()
	jids := make([]types.JID, 0, len(m.blocks.entries)+len(e.Changes))
	for _, b := range m.blocks.entries {
		jids = append(jids, jidOfContact(b))
	}
	m.blocks.mu.Unlock()
	for _, c := range e.Changes {
		jids = slices.DeleteFunc(jids, func(j types.JID) bool { return sameContact(m.bgCtx, cli, j, c.JID) })
		if c.Action == events.BlocklistChangeActionBlock {
			jids = append(jids, c.JID.ToNonAD())
		}
	}
	if err := m.replaceBlocklist(m.bgCtx, cli, jids, bridge.BlockedByPhone); err != nil {
		m.log.Error(err, "store block change; WhatsApp will deliver it again")
		return false
	}
	return true
}

// replaceBlocklist makes jids the block list, reporting each contact that
// entered or left it first: a report that fails leaves the list as it was,
// so that WhatsApp's next word reports it again.
func (m *Session) replaceBlocklist(ctx context.Context, cli *whatsmeow.Client, jids []types.JID, by string) error {
	next := m.blockedContacts(ctx, cli, jids)
	m.blocks.mu.Lock()
	prev := slices.Clone(m.blocks.entries)
	m.blocks.mu.Unlock()
	now := m.opts.Now()
	for _, change := range blockChanges(prev, next) {
		if m.opts.Blocks == nil {
			break
		}
		change.By, change.At = by, now
		if err := m.opts.Blocks.BlockChanged(ctx, change); err != nil {
			return err
		}
	}
	m.blocks.set(next)
	return nil
}

// blockChanges lists the contacts of next that prev lacks (blocked) and
// those of prev that next lacks (unblocked).
func blockChanges(prev, next []bridge.BlockedContact) []bridge.BlockChange {
	var out []bridge.BlockChange
	has := func(list []bridge.BlockedContact, c bridge.BlockedContact) bool {
		return slices.ContainsFunc(list, func(o bridge.BlockedContact) bool { return o.Contact == c.Contact })
	}
	for _, c := range next {
		if !has(prev, c) {
			out = append(out, bridge.BlockChange{Contact: c.Contact, ContactLID: c.ContactLID, ContactPhone: c.ContactPhone, Blocked: true})
		}
	}
	for _, c := range prev {
		if !has(next, c) {
			out = append(out, bridge.BlockChange{Contact: c.Contact, ContactLID: c.ContactLID, ContactPhone: c.ContactPhone})
		}
	}
	return out
}

// blockedContacts names each JID of WhatsApp's list (LIDs, in current
// addressing) by its phone number too, when the session learned it.
func (m *Session) blockedContacts(ctx context.Context, cli *whatsmeow.Client, jids []types.JID) []bridge.BlockedContact {
	out := make([]bridge.BlockedContact, 0, len(jids))
	for _, j := range jids {
		who, err := senderOf(ctx, cli, j, types.EmptyJID)
		if err != nil {
			continue // not a user: nothing a send could name
		}
		c := bridge.BlockedContact{Contact: who.From, ContactLID: who.FromLID, ContactPhone: who.FromPhone}
		if !slices.ContainsFunc(out, func(o bridge.BlockedContact) bool { return o.Contact == c.Contact }) {
			out = append(out, c)
		}
	}
	return out
}

// forget drops the list of an account that logged out.
func (b *blockList) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loaded, b.entries, b.byJID = false, nil, nil
}

func (b *blockList) set(entries []bridge.BlockedContact) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loaded, b.entries, b.byJID = true, entries, make(map[string]bool, 2*len(entries))
	for _, c := range entries {
		for _, r := range []bridge.Recipient{c.ContactLID, c.ContactPhone} {
			if !r.IsZero() {
				b.byJID[r.JID()] = true
			}
		}
	}
}

// jidOfContact is the JID WhatsApp names a blocked contact by: its LID
// when known.
func jidOfContact(c bridge.BlockedContact) types.JID {
	r := c.ContactLID
	if r.IsZero() {
		r = c.Contact
	}
	jid, _ := types.ParseJID(r.JID())
	return jid
}

// sameContact reports whether a and b name one user, by phone number or
// LID.
func sameContact(ctx context.Context, cli *whatsmeow.Client, a, b types.JID) bool {
	x, errA := senderOf(ctx, cli, a, types.EmptyJID)
	y, errB := senderOf(ctx, cli, b, types.EmptyJID)
	return errA == nil && errB == nil && x.From == y.From
}
