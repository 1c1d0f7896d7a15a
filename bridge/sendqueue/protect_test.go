package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The gap after an attempt is the rate's interval stretched by the jitter:
// never shorter, at most half as long again.
func TestPaceGap(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		u        float64
		want     time.Duration
	}{
		{3 * time.Second, 0, 3 * time.Second},
		{3 * time.Second, 0.5, 3750 * time.Millisecond},
		{3 * time.Second, 0.999999, 4499998500 * time.Nanosecond},
		{time.Millisecond, 1, 1500 * time.Microsecond},
	} {
		if got := paceGap(tc.interval, tc.u); got != tc.want {
			t.Errorf("paceGap(%s, %v) = %s, want %s", tc.interval, tc.u, got, tc.want)
		}
	}
}

// The pacer books one attempt per gap on an injected clock: the first at
// once, the next only when its gap has passed, and a refused take books
// nothing.
func TestPacerTake(t *testing.T) {
	p := newPacer(bridge.SendRate{N: 20, Per: time.Minute})
	p.random = func() float64 { return 0.5 } // gap 3.75 s
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	steps := []struct {
		at   time.Duration
		want bool
	}{
		{0, true}, {time.Second, false}, {3749 * time.Millisecond, false}, {3750 * time.Millisecond, true},
		{7 * time.Second, false}, {time.Minute, true}, {time.Minute + time.Millisecond, false},
	}
	for _, s := range steps {
		if got := p.take(t0.Add(s.at)); got != s.want {
			t.Errorf("take at +%s = %v, want %v", s.at, got, s.want)
		}
	}
	if want := t0.Add(time.Minute + 3750*time.Millisecond); !p.readyAt().Equal(want) {
		t.Errorf("ready at %s, want %s", p.readyAt(), want)
	}
	// An attempt that spent 200ms preparing reached WhatsApp that much
	// later: the next waits as much longer.
	p.postpone(200 * time.Millisecond)
	if want := t0.Add(time.Minute + 3950*time.Millisecond); !p.readyAt().Equal(want) {
		t.Errorf("after a slow preparation, ready at %s, want %s", p.readyAt(), want)
	}
	unpaced := newPacer(bridge.SendRate{})
	for range 3 {
		if !unpaced.take(t0) {
			t.Fatal("an unpaced queue refused an attempt")
		}
	}
}

// A restriction's end holds the queue; an earlier or past one does not.
func TestHoldExtendsOnly(t *testing.T) {
	f := newFixture(t)
	t0 := time.Now()
	f.q.hold.extend(t0.Add(time.Minute))
	f.q.hold.extend(t0.Add(time.Second)) // earlier: ignored
	if got := f.q.heldUntil(t0); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("held until %s, want +1m", got)
	}
	if got := f.q.heldUntil(t0.Add(2 * time.Minute)); !got.IsZero() {
		t.Errorf("held until %s after the end, want not held", got)
	}
}

// Messages accepted at once are attempted at the rate, each gap within its
// jitter; accepting never waits (only the first is attempted in the
// request), and none fails.
func TestPacedAttempts(t *testing.T) {
	const n = 6
	interval := 100 * time.Millisecond
	f := newFixture(t, time.Hour)
	f.reopen(func(_ *MessageLogOptions, o *Options) { o.Rate = bridge.SendRate{N: 10, Per: time.Second} })
	f.run()
	texts := make([]string, n)
	for i := range texts {
		texts[i] = "m"
	}
	started := time.Now()
	res := f.submit(textRequest(texts...))
	if took := time.Since(started); took > (n-1)*interval {
		t.Errorf("accepting took %s; it must not wait for the pace", took)
	}
	if res.Messages[0].Status != bridge.StatusSent || res.Messages[n-1].Status != bridge.StatusQueued || res.Messages[n-1].Attempts != 0 {
		t.Fatalf("immediate outcome %+v", res.Messages)
	}
	last := f.waitStatus(res.Messages[n-1].ID, bridge.StatusSent)
	calls := f.sender.calls()
	if len(calls) != n || last.RetryCount != 0 {
		t.Fatalf("%d attempts for %d messages, last %+v", len(calls), n, last)
	}
	for i := 1; i < n; i++ {
		gap := calls[i].at.Sub(calls[i-1].at)
		// Only the lower bound is exact here: an attempt's bookkeeping on a
		// loaded machine may delay the next one (TestPaceGap bounds the
		// jitter, the process test the achieved mean).
		if gap < interval-time.Millisecond {
			t.Errorf("gap %d is %s; the rate allows no less than %s", i, gap, interval)
		}
		if calls[i].out.ID != res.Messages[i].WhatsAppID {
			t.Errorf("attempt %d sent %s, want %s (accepted order)", i, calls[i].out.ID, res.Messages[i].WhatsAppID)
		}
	}
}

// Order within a chat: the first of three messages fails twice before it is
// sent; the other two wait for it (even though their immediate attempts
// would have succeeded) and go after it, in order.
func TestChatOrderHoldsAcrossRetries(t *testing.T) {
	f := newFixture(t, 30*time.Millisecond, 30*time.Millisecond, time.Hour)
	f.sender.results = []error{errors.New("timeout"), errors.New("timeout")}
	first := f.submit(textRequest("one"))
	rest := f.submit(textRequest("two", "three"))
	for _, m := range rest.Messages {
		if m.Status != bridge.StatusQueued || m.Attempts != 0 {
			t.Fatalf("a later message was attempted while the first retries: %+v", m)
		}
	}
	f.run()
	got := f.waitStatus(rest.Messages[1].ID, bridge.StatusSent)
	if got.RetryCount != 0 || got.Attempts != 1 {
		t.Errorf("third message %+v", got)
	}
	if m := f.waitStatus(first.Messages[0].ID, bridge.StatusSent); m.RetryCount != 2 {
		t.Errorf("first message %+v, want 2 retries", m)
	}
	var order []string
	for _, c := range f.sender.calls() {
		order = append(order, c.out.Text)
	}
	if want := "[one one one two three]"; fmt.Sprint(order) != want {
		t.Errorf("attempts %v, want %s", order, want)
	}
}

// Another chat is not held by a chat that retries.
func TestOtherChatsDoNotWait(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.sender.results = []error{errors.New("timeout")}
	f.submit(textRequest("stuck"))
	res := f.submit(Request{Recipient: bridge.PhoneRecipient("4915199999999"), Items: []Item{{Type: bridge.TypeText, Text: "free"}}})
	if !allSent(res) {
		t.Errorf("a message to another chat waited: %+v", res.Messages)
	}
}

// Order survives a restart: after reopening, the worker still attempts the
// chat's messages in accepted order, the one that failed first.
func TestChatOrderAfterRestart(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond, time.Hour)
	f.sender.setReady(false)
	a := f.submit(textRequest("a"))
	b := f.submit(textRequest("b"))
	f.close()
	f.open(nil)
	f.sender.setReady(true)
	f.run()
	f.waitStatus(b.Messages[0].ID, bridge.StatusSent)
	f.waitStatus(a.Messages[0].ID, bridge.StatusSent)
	calls := f.sender.calls()
	if len(calls) != 2 || calls[0].out.Text != "a" || calls[1].out.Text != "b" {
		t.Errorf("attempts %+v, want a then b", calls)
	}
}

// A restriction answer holds the queue until it ends: the refused message
// keeps its attempts and retry count, nothing else is attempted meanwhile,
// and then the queue drains with no message Failed.
func TestRestrictionHoldsWithoutSpendingRetries(t *testing.T) {
	f := newFixture(t, time.Millisecond) // one retry only: a spent retry would fail it
	// Long enough for the three commits before the second submit's check
	// on a loaded machine.
	until := time.Now().Add(1500 * time.Millisecond)
	f.sender.results = []error{&bridge.RestrictedError{Code: bridge.RestrictionRateLimit, Until: until, Err: errors.New("server returned error 429")}}
	held := f.submit(textRequest("first"))
	m := held.Messages[0]
	if m.Status != bridge.StatusQueued || m.Attempts != 0 || m.RetryCount != 0 || m.LastError == "" {
		t.Fatalf("after the refused attempt: %+v", m)
	}
	other := f.submit(Request{Recipient: bridge.PhoneRecipient("4915199999999"), Items: []Item{{Type: bridge.TypeText, Text: "second"}}})
	if other.Messages[0].Attempts != 0 {
		t.Fatalf("attempted during the restriction: %+v", other.Messages[0])
	}
	f.run()
	for _, id := range []string{m.ID, other.Messages[0].ID} {
		got := f.waitStatus(id, bridge.StatusSent)
		if got.RetryCount != 0 || got.Attempts != 1 {
			t.Errorf("after the hold: %+v, want sent on its first counted attempt", got)
		}
	}
	calls := f.sender.calls()
	if len(calls) != 3 || calls[1].at.Before(until) {
		t.Errorf("attempts %d, the second at %s, before the restriction's end %s", len(calls), calls[1].at, until)
	}
}

// A restriction the session knows of (WhatsApp's notification) holds the
// queue before any send runs into it.
func TestSessionRestrictionHolds(t *testing.T) {
	sender := &restrictedSender{fakeSender: &fakeSender{ready: true}}
	f := newFixture(t, time.Hour)
	f.reopen(func(_ *MessageLogOptions, o *Options) { o.Sender = sender })
	sender.until = time.Now().Add(1500 * time.Millisecond)
	res := f.submit(textRequest("wait"))
	if res.Messages[0].Attempts != 0 || len(sender.calls()) != 0 {
		t.Fatalf("attempted during the session's restriction: %+v", res.Messages[0])
	}
	f.run()
	f.waitStatus(res.Messages[0].ID, bridge.StatusSent)
	if at := sender.calls()[0].at; at.Before(sender.until) {
		t.Errorf("sent at %s, before the restriction's end %s", at, sender.until)
	}
}

type restrictedSender struct {
	*fakeSender
	until time.Time
}

func (s *restrictedSender) RestrictedUntil() time.Time { return s.until }

var _ RestrictionSource = (*restrictedSender)(nil)

// acceptedOrder lists the messages' ids in the order they were stored.
func (f *fixture) acceptedOrder() []string {
	f.t.Helper()
	rows, err := f.db.Query(`SELECT id FROM messages ORDER BY rowid`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			f.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// reopen closes the fixture's queue and opens it again with adjusted options.
func (f *fixture) reopen(adjust func(*MessageLogOptions, *Options)) {
	f.t.Helper()
	f.close()
	f.open(adjust)
}

// Concurrent requests to one chat: each waits for the earlier one's attempt
// in flight instead of leaving its message to the worker, so all are sent
// on their immediate attempt, in accepted order.
func TestConcurrentRequestsToOneChat(t *testing.T) {
	f := newFixture(t, time.Hour)
	results := make([]Result, 8)
	// The first attempt stays in flight until every request is stored, so
	// that all of them find an earlier attempt to wait for.
	var first sync.Once
	f.sender.during = func(bridge.Outgoing) {
		first.Do(func() {
			testutil.Wait(10*time.Second, func() bool {
				var n int
				return f.db.QueryRow(`SELECT count(*) FROM messages`).Scan(&n) == nil && n == len(results)
			})
		})
	}
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = f.submit(textRequest("m")) })
	}
	wg.Wait()
	for _, r := range results {
		if !allSent(r) {
			t.Errorf("not sent on its immediate attempt: %+v", r.Messages)
		}
	}
	ids := f.acceptedOrder() // the order of the commits, not of the ids
	byWhatsAppID := map[string]string{}
	for _, r := range results {
		byWhatsAppID[r.Messages[0].WhatsAppID] = r.Messages[0].ID
	}
	for i, c := range f.sender.calls() {
		if byWhatsAppID[c.out.ID] != ids[i] {
			t.Errorf("attempt %d sent %s, not the %d. accepted message", i, byWhatsAppID[c.out.ID], i+1)
		}
	}
}

// An earlier message's attempt that ends between a request's read of its
// chat's order and its wait is not missed: the request reads the order
// again at once instead of waiting for a release that already happened
// (under load, the last requests of a burst waited out inFlightWait so).
func TestReleaseBetweenReadAndWaitIsNotMissed(t *testing.T) {
	f := newFixture(t, time.Hour)
	q := f.q
	seen := q.releaseCount()
	q.markSending("earlier", true)
	q.markSending("earlier", false) // its attempt ends after the read
	released, going := q.whenReleased([]earlier{{id: "earlier"}}, false, seen)
	if !going {
		t.Fatal("an earlier message due now counts as going")
	}
	select {
	case <-released:
	default:
		t.Error("the request would wait for a release that already happened")
	}
}

// A request whose first item fails and waits for its retry answers at once:
// its later items do not wait for the first's claim, which the request
// itself holds, and stay Queued behind it.
func TestRequestAnswersWhenItsFirstItemWaitsForARetry(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.sender.results = []error{errors.New("timeout")}
	started := time.Now()
	res := f.submit(textRequest("first", "second"))
	if took := time.Since(started); took > time.Second {
		t.Errorf("the request took %s", took)
	}
	if res.Messages[0].Status != bridge.StatusQueued || res.Messages[1].Status != bridge.StatusQueued || res.Messages[1].Attempts != 0 {
		t.Errorf("outcome %+v", res.Messages)
	}
}

// WhatsApp lifts a lock early: the session, which heard it, is the queue's
// judge, so the other chats go on at once; the refused message waits for
// the time it was given.
func TestEarlyLiftReleasesTheQueue(t *testing.T) {
	sender := &restrictedSender{fakeSender: &fakeSender{ready: true}}
	f := newFixture(t, time.Hour)
	f.reopen(func(_ *MessageLogOptions, o *Options) { o.Sender = sender })
	sender.until = time.Now().Add(time.Hour)
	sender.results = []error{&bridge.RestrictedError{Code: bridge.RestrictionReachout, Until: sender.until, Err: errors.New("server returned error 463")}}
	refused := f.submit(textRequest("refused"))
	other := f.submit(Request{Recipient: bridge.PhoneRecipient("4915199999999"), Items: []Item{{Type: bridge.TypeText, Text: "other chat"}}})
	if refused.Messages[0].Status != bridge.StatusQueued || other.Messages[0].Attempts != 0 {
		t.Fatalf("during the lock: %+v %+v", refused.Messages[0], other.Messages[0])
	}
	sender.until = time.Time{} // lifted
	f.run()
	f.waitStatus(other.Messages[0].ID, bridge.StatusSent)
}

// A request behind more than maxEarlierAwaited Queued messages of its chat
// leaves its attempt to the worker at once, without reading the whole
// backlog or waiting for it; behind that many, it still waits for them as
// before (they are going: due now, unpaced).
func TestRequestBehindALongBacklogLeavesItToTheWorker(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.sender.ready = false // unlinked: accepted and Queued, not attempted
	var ids []string
	for len(ids) < maxEarlierAwaited+2 {
		res := f.submit(textRequest("a", "b", "c", "d"))
		for _, m := range res.Messages {
			ids = append(ids, m.ID)
		}
	}
	// Due now, as after a reconnect: every earlier message counts as going.
	if _, err := f.db.Exec(`UPDATE messages SET next_attempt_at = ?`, time.Now().Add(-time.Second).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	behindMax, err := f.q.earlierInChat(ctx, ids[maxEarlierAwaited], maxEarlierAwaited+1)
	if err != nil {
		t.Fatal(err)
	}
	if _, going := f.q.whenReleased(behindMax, false, f.q.releaseCount()); len(behindMax) != maxEarlierAwaited || !going {
		t.Fatalf("behind %d messages due now: %d read, going %v; want all, going", maxEarlierAwaited, len(behindMax), going)
	}

	started := time.Now()
	if f.q.clearOfEarlier(ctx, ids[maxEarlierAwaited+1]) {
		t.Fatal("a request behind a backlog was cleared to go first")
	}
	if waited := time.Since(started); waited >= inFlightWait/2 {
		t.Errorf("a request behind %d messages waited %v for them (inFlightWait %v)", maxEarlierAwaited+1, waited, inFlightWait)
	}
}

// BenchmarkEarlierInChat: a request's read of its chat's order behind a
// backlog of 10,000 Queued messages, bounded by maxEarlierAwaited, and the
// whole backlog as it was read before (the baseline, same file, same run).
//
//	go test -run=NONE -bench=EarlierInChat ./bridge/sendqueue
func BenchmarkEarlierInChat(b *testing.B) {
	const backlog = 10_000
	db := testutil.OpenBridgeDB(b)
	writer := sqlite.NewBatcher(db)
	b.Cleanup(writer.Close)
	log := NewMessageLog(MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	q := New(Options{Sender: &fakeSender{}, Log: log})
	queueBacklog(b, db, backlog)
	last := fmt.Sprintf("msg_%08d", backlog-1)
	for _, bench := range []struct {
		name  string
		limit int
	}{{"bounded", maxEarlierAwaited + 1}, {"whole backlog", backlog}} {
		b.Run(bench.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := q.earlierInChat(context.Background(), last, bench.limit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// queueBacklog inserts n Queued texts to alice, due now, in one transaction.
func queueBacklog(tb testing.TB, db *sql.DB, n int) {
	tb.Helper()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body, status,
		created_at, updated_at, next_attempt_at) VALUES (?, ?, ?, 0, ?, 'text', 'hello', 'Queued', ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).UnixMilli()
	for i := range n {
		at := start + int64(i)
		if _, err := stmt.Exec(fmt.Sprintf("msg_%08d", i), fmt.Sprintf("WA%08d", i), fmt.Sprintf("req_%08d", i), alice.JID(), at, at, at); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}
