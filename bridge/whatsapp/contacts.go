package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// ContactTTL is how long WhatsApp's answer about a number is trusted.
const ContactTTL = 24 * time.Hour

// maxCachedContacts bounds the answers kept in memory; bridge.db keeps
// them all for the TTL.
const maxCachedContacts = 50_000

// ContactBook answers whether phone numbers are on WhatsApp: from memory,
// then from bridge.db's contacts table, then by asking WhatsApp (a usync
// query), one question per number at a time however many ask at once.
type ContactBook struct {
	m       *Manager
	db      *sql.DB
	batcher *sqlite.Batcher
	now     func() time.Time

	flight singleflight.Group
	mu     sync.Mutex
	mem    map[string]bridge.Contact
	at     map[string]time.Time // when each answer in mem was given
}

// NewContactBook returns the contact book that asks through m and caches in
// db (bridge.db, written through batcher).
func NewContactBook(m *Manager, db *sql.DB, batcher *sqlite.Batcher) *ContactBook {
	return &ContactBook{m: m, db: db, batcher: batcher, now: m.opts.Now,
		mem: map[string]bridge.Contact{}, at: map[string]time.Time{}}
}

// Contact answers for number (digits with country code). While WhatsApp
// cannot be asked (no linked, connected session) and no answer is cached,
// it fails with bridge.ErrNotLinked.
func (b *ContactBook) Contact(ctx context.Context, number string) (bridge.Contact, error) {
	if c, ok := b.remembered(number); ok {
		return c, nil
	}
	v, err, _ := b.flight.Do(number, func() (any, error) {
		// One caller's cancellation must not fail the others waiting here.
		return b.load(context.WithoutCancel(ctx), number)
	})
	if err != nil {
		return bridge.Contact{}, err
	}
	return v.(bridge.Contact), nil //nolint:forcetypeassert // load returns only this type
}

func (b *ContactBook) remembered(number string) (bridge.Contact, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.mem[number]
	if ok && b.now().Sub(b.at[number]) < ContactTTL {
		return c, true
	}
	return bridge.Contact{}, false
}

func (b *ContactBook) remember(c bridge.Contact, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.mem) >= maxCachedContacts {
		b.mem, b.at = map[string]bridge.Contact{}, map[string]time.Time{}
	}
	b.mem[c.Number], b.at[c.Number] = c, at
}

// load reads number's answer from bridge.db, or asks WhatsApp and stores it.
func (b *ContactBook) load(ctx context.Context, number string) (bridge.Contact, error) {
	c, at, err := b.stored(ctx, number)
	if err == nil && b.now().Sub(at) < ContactTTL {
		b.remember(c, at)
		return c, nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return bridge.Contact{}, fmt.Errorf("read contact: %w", err)
	}
	if c, err = b.m.lookUp(ctx, number); err != nil {
		return bridge.Contact{}, err
	}
	now := b.now()
	if err := b.store(ctx, c, now); err != nil {
		// The answer stands; it is asked again after a restart.
		b.m.log.Error(err, "store contact")
	}
	b.remember(c, now)
	return c, nil
}

func (b *ContactBook) stored(ctx context.Context, number string) (bridge.Contact, time.Time, error) {
	c := bridge.Contact{Number: number}
	var checked int64
	err := b.db.QueryRowContext(ctx, `SELECT on_whatsapp, jid, lid, checked_at FROM contacts WHERE number = ?`, number).
		Scan(&c.OnWhatsApp, &c.JID, &c.LID, &checked)
	return c, time.UnixMilli(checked), err
}

// store keeps c, and forgets the answers past their TTL.
func (b *ContactBook) store(ctx context.Context, c bridge.Contact, now time.Time) error {
	return b.batcher.Do(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO contacts (number, on_whatsapp, jid, lid, checked_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (number) DO UPDATE SET on_whatsapp = excluded.on_whatsapp, jid = excluded.jid,
			lid = excluded.lid, checked_at = excluded.checked_at`,
			c.Number, c.OnWhatsApp, c.JID, c.LID, now.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM contacts WHERE checked_at < ?`, now.Add(-ContactTTL).UnixMilli())
		return err
	})
}

// lookUp asks WhatsApp whether number is registered (whatsmeow's
// IsOnWhatsApp, a usync contact query); the LID comes from what the
// session learned of the account, when it did.
func (m *Manager) lookUp(ctx context.Context, number string) (bridge.Contact, error) {
	cli, err := m.readyClient()
	if err != nil {
		return bridge.Contact{}, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	answers, err := cli.IsOnWhatsApp(ctx, []string{"+" + number})
	if err != nil {
		return bridge.Contact{}, sendFailed(ctx, fmt.Errorf("is on whatsapp: %w", err))
	}
	c := bridge.Contact{Number: number}
	for _, a := range answers {
		if a.Query != "+"+number && a.JID.User != number {
			continue
		}
		c.OnWhatsApp = a.IsIn
		if a.IsIn {
			c.JID = a.JID.ToNonAD().String()
			if lid, err := cli.Store.LIDs.GetLIDForPN(ctx, a.JID); err == nil && !lid.IsEmpty() {
				c.LID = lid.String()
			}
		}
		return c, nil
	}
	return bridge.Contact{}, fmt.Errorf("is on whatsapp: no answer for %s", number)
}
