package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"golang.org/x/sync/singleflight"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// ContactTTL is how long WhatsApp's answer about a number is trusted.
const ContactTTL = 24 * time.Hour

// maxCachedContacts bounds the answers kept in memory; bridge.db keeps
// them all for the TTL.
const maxCachedContacts = 50_000

// Bounds of the number checks that reach WhatsApp; the budget itself is
// CHECK_RATE and CHECK_BURST (WhatsApp bans accounts that enumerate
// numbers, so by default a handful at once, then one every few seconds).
const (
	// maxCheckBatch is how many numbers one usync query carries at most:
	// what waits for the budget's next token goes in one query.
	maxCheckBatch = 8
	// maxQueueCheckWait is how long the send queue waits for the budget
	// before its attempt fails (and is retried like a failed send).
	maxQueueCheckWait = time.Minute
)

// ContactBook answers whether phone numbers are on WhatsApp: from memory,
// then from bridge.db's contacts table, then by asking WhatsApp (a usync
// query), one question per number at a time however many ask at once, and
// the questions within a budget: beyond it the API is refused with a
// retry hint, while the send queue waits for the next token, and numbers
// asked meanwhile join the waiting query.
type ContactBook struct {
	m       *Session
	db      *sql.DB
	batcher *sqlite.Batcher
	now     func() time.Time
	budget  *bridge.Budget

	flight singleflight.Group
	mu     sync.Mutex
	mem    map[string]bridge.Contact
	at     map[string]time.Time // when each answer in mem was given
	open   *contactQuery        // the query waiting for its token; others join it
}

// NewContactBook returns the contact book that asks through m within a
// budget of rate (burst at once) and caches in db (bridge.db, written
// through batcher).
func NewContactBook(m *Session, db *sql.DB, batcher *sqlite.Batcher, rate bridge.SendRate, burst int) *ContactBook {
	return &ContactBook{m: m, db: db, batcher: batcher, now: m.opts.Now, budget: bridge.NewBudget(rate, burst),
		mem: map[string]bridge.Contact{}, at: map[string]time.Time{}}
}

// Contact answers for number (digits with country code). While WhatsApp
// cannot be asked (no linked, connected session) and no answer is cached,
// it fails with bridge.ErrNotLinked; beyond the budget with a
// KindRateLimited error whose cause is a bridge.RetryAfter.
func (b *ContactBook) Contact(ctx context.Context, number string) (bridge.Contact, error) {
	return b.contact(ctx, number, 0)
}

// QueueChecks is the book as the send queue uses it: a check beyond the
// budget waits for the next token (up to a minute) instead of failing,
// since the queue's pace holds the message anyway.
func (b *ContactBook) QueueChecks() QueueChecks { return QueueChecks{b} }

// QueueChecks answers the send queue's pre-send checks (sendqueue.Checker).
type QueueChecks struct{ book *ContactBook }

// Contact is ContactBook.Contact, waiting for the budget.
func (q QueueChecks) Contact(ctx context.Context, number string) (bridge.Contact, error) {
	return q.book.contact(ctx, number, maxQueueCheckWait)
}

func (b *ContactBook) contact(ctx context.Context, number string, maxWait time.Duration) (bridge.Contact, error) {
	if c, ok := b.remembered(number); ok {
		return c, nil
	}
	v, err, _ := b.flight.Do(number, func() (any, error) {
		// One caller's cancellation must not fail the others waiting here.
		return b.load(context.WithoutCancel(ctx), number, maxWait)
	})
	if err != nil {
		return bridge.Contact{}, err
	}
	return v.(bridge.Contact), nil //nolint:forcetypeassert // load returns only this type
}

// Cached is the answer about number from memory or bridge.db, without
// asking WhatsApp; false when there is none younger than ContactTTL.
func (b *ContactBook) Cached(ctx context.Context, number string) (bridge.Contact, bool) {
	if c, ok := b.remembered(number); ok {
		return c, true
	}
	c, at, err := b.stored(ctx, number)
	if err != nil || b.now().Sub(at) >= ContactTTL {
		return bridge.Contact{}, false
	}
	return c, true
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
func (b *ContactBook) load(ctx context.Context, number string, maxWait time.Duration) (bridge.Contact, error) {
	c, at, err := b.stored(ctx, number)
	if err == nil && b.now().Sub(at) < ContactTTL {
		b.remember(c, at)
		return c, nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return bridge.Contact{}, fmt.Errorf("read contact: %w", err)
	}
	return b.ask(ctx, number, maxWait)
}

// contactQuery is one usync query in the making: the numbers it carries
// and, once done, their answers.
type contactQuery struct {
	numbers []string
	done    chan struct{}
	answers map[string]bridge.Contact
	err     error
}

// errCheckRate refuses a number check beyond CHECK_RATE.
func errCheckRate(wait time.Duration) error {
	return &bridge.Error{Kind: bridge.KindRateLimited, Code: bridge.CodeCheckRateLimited,
		Message: "too many number checks reach WhatsApp (CHECK_RATE); retry after the Retry-After seconds",
		Err:     bridge.RetryAfter(wait)}
}

// ask asks WhatsApp about number within the budget: it joins the query
// that waits for its token, or opens one when a token is due within
// maxWait, and stores the answers.
func (b *ContactBook) ask(ctx context.Context, number string, maxWait time.Duration) (bridge.Contact, error) {
	b.mu.Lock()
	q := b.open
	if q != nil && len(q.numbers) < maxCheckBatch {
		q.numbers = append(q.numbers, number)
		b.mu.Unlock()
		<-q.done
	} else {
		wait, ok := b.budget.Reserve(b.now(), maxWait)
		if !ok {
			b.mu.Unlock()
			return bridge.Contact{}, errCheckRate(wait)
		}
		q = &contactQuery{numbers: []string{number}, done: make(chan struct{})}
		if wait > 0 {
			b.open = q
		}
		b.mu.Unlock()
		b.run(ctx, q, wait)
	}
	if q.err != nil {
		return bridge.Contact{}, q.err
	}
	return q.answers[number], nil
}

// run sends q after wait (its token's time), closed to new numbers from
// then on, and stores what WhatsApp answered. The wait and the question
// end the moment the link leaves connected, like a send: the send queue's
// attempt behind a check must not hold a message on a dead link.
func (b *ContactBook) run(ctx context.Context, q *contactQuery, wait time.Duration) {
	defer close(q.done)
	ctx, stop := b.m.whileConnected(ctx)
	defer stop()
	if q.err = b.waitForToken(ctx, q, wait); q.err != nil {
		return
	}
	q.answers, q.err = b.m.lookUp(ctx, q.numbers)
	now := b.now()
	for _, c := range q.answers {
		if err := b.store(ctx, c, now); err != nil {
			// The answer stands; it is asked again after a restart.
			b.m.log.Error(err, "store contact")
		}
		b.remember(c, now)
	}
}

// waitForToken waits out q's wait, or fails when ctx ends first; q takes
// no more numbers from then on.
func (b *ContactBook) waitForToken(ctx context.Context, q *contactQuery, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	defer func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.open == q {
			b.open = nil
		}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
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

// lookUp asks WhatsApp whether numbers are registered, in one usync
// contact query (whatsmeow's IsOnWhatsApp); the LID comes from what the
// session learned of the account, when it did. A number WhatsApp did not
// answer about fails the whole query.
func (m *Session) lookUp(ctx context.Context, numbers []string) (map[string]bridge.Contact, error) {
	cli, err := m.readyClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	phones := make([]string, len(numbers))
	for i, n := range numbers {
		phones[i] = "+" + n
	}
	answers, err := cli.IsOnWhatsApp(ctx, phones)
	if err != nil {
		return nil, sendFailed(ctx, fmt.Errorf("is on whatsapp: %w", err))
	}
	out := make(map[string]bridge.Contact, len(numbers))
	for _, a := range answers {
		c := contactOf(ctx, cli, a, numbers)
		out[c.Number] = c
	}
	for _, n := range numbers {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("is on whatsapp: no answer for %s", n)
		}
	}
	return out, nil
}

// contactOf reads one answer of IsOnWhatsApp. WhatsApp answers in LID
// addressing: a registered number by its LID, with the number beside it
// (PhoneNumber); an older answer names the number alone, and the LID comes
// from what the session learned.
func contactOf(ctx context.Context, cli *whatsmeow.Client, a types.IsOnWhatsAppResponse, asked []string) bridge.Contact {
	pn, lid := a.JID.ToNonAD(), types.EmptyJID
	if pn.Server == types.HiddenUserServer {
		pn, lid = a.PhoneNumber.ToNonAD(), pn
	}
	number := strings.TrimPrefix(a.Query, "+")
	if !slices.Contains(asked, number) {
		number = pn.User
	}
	c := bridge.Contact{Number: number, OnWhatsApp: a.IsIn}
	if !a.IsIn {
		return c
	}
	if pn.IsEmpty() {
		pn = types.NewJID(number, types.DefaultUserServer)
	}
	c.JID = pn.String()
	if lid.IsEmpty() {
		lid, _ = cli.Store.LIDs.GetLIDForPN(ctx, pn)
	}
	if !lid.IsEmpty() {
		c.LID = lid.String()
	}
	return c
}

// ByLID names the contact of a LID (its digits) by the phone number the
// session learned for it (whatsmeow's LID map: from messages, group
// members, contact checks), without asking WhatsApp, which never tells a
// number its owner hides. False when no number is known.
func (b *ContactBook) ByLID(ctx context.Context, lid string) (bridge.Contact, bool, error) {
	cli := b.m.client.Load()
	if cli.Store.LIDs == nil {
		return bridge.Contact{}, false, nil
	}
	lidJID := types.NewJID(lid, types.HiddenUserServer)
	pn, err := cli.Store.LIDs.GetPNForLID(ctx, lidJID)
	if err != nil {
		return bridge.Contact{}, false, fmt.Errorf("read the LID map: %w", err)
	}
	if pn.IsEmpty() {
		return bridge.Contact{}, false, nil
	}
	return bridge.Contact{Number: pn.User, OnWhatsApp: true, JID: pn.ToNonAD().String(), LID: lidJID.String()}, true, nil
}
