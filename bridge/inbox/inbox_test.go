package inbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/durable"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

var (
	start = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ana   = bridge.PhoneRecipient("4915112345678")
	lid   = bridge.Recipient{Kind: bridge.RecipientLID, ID: "99887766"}
)

// clock is a settable time.
type clock struct{ ms atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) set(t time.Time)  { c.ms.Store(t.UnixMilli()) }
func (c *clock) now() time.Time   { return time.UnixMilli(c.ms.Load()).UTC() }

// fixture is an inbox on a fresh bridge.db with a real outbox posting to
// url (webhooks off when empty), not yet delivering.
type fixture struct {
	*Inbox
	db      *sql.DB
	batcher *sqlite.Batcher
	outbox  *webhook.Outbox
	clock   *clock
}

func newFixture(t *testing.T, url string) *fixture {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	b := sqlite.NewBatcher(db)
	t.Cleanup(b.Close)
	c := newClock(start)
	o := webhook.New(webhook.Options{DB: db, Batcher: b, URL: url, Log: logr.Discard(), LocalTargets: true})
	in := New(Options{DB: db, Batcher: b, Webhooks: o, Retention: 720 * time.Hour, Now: c.now, Log: logr.Discard(),
		Identities: NewIdentityBook()})
	return &fixture{Inbox: in, db: db, batcher: b, outbox: o, clock: c}
}

// deliver runs the outbox until the test ends.
func (f *fixture) deliver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = f.outbox.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
}

// store stores in in a transaction of its own, as the wiring does.
func (f *fixture) store(t *testing.T, in bridge.Incoming) {
	t.Helper()
	if err := f.batcher.Do(context.Background(), func(tx *sql.Tx) error { return f.Store(context.Background(), tx, in) }); err != nil {
		t.Fatal(err)
	}
}

func text(id, body string) bridge.Incoming {
	return bridge.Incoming{WhatsAppID: id, From: ana, FromPhone: ana, Chat: ana, PushName: "Ana", Type: "text",
		Text: body, Timestamp: start.Add(-time.Second)}
}

// outboxRows maps the outbox's webhook-ids to their bodies.
func (f *fixture) outboxRows(t *testing.T) map[string]string {
	t.Helper()
	rows, err := f.db.Query(`SELECT webhook_id, payload FROM webhook_outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, body string
		if err := rows.Scan(&id, &body); err != nil {
			t.Fatal(err)
		}
		out[id] = body
	}
	return out
}

// listAll pages through the history with limit and returns every entry.
func (f *fixture) listAll(t *testing.T, filter Filter) []Entry {
	t.Helper()
	var all []Entry
	for page := 0; ; page++ {
		entries, next, err := f.List(context.Background(), filter)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, entries...)
		if next == "" {
			return all
		}
		if page > 100 {
			t.Fatal("paging does not end")
		}
		filter.Cursor = next
	}
}

// The history lists every stored event newest first, page by page with no
// gap or repeat even when events share a millisecond; each entry carries
// the webhook-id and body its outbox event has.
func TestStoreAndList(t *testing.T) {
	f := newFixture(t, "http://127.0.0.1:1/hook")
	var want []string
	for i := range 7 {
		f.clock.set(start.Add(time.Duration(i/2) * time.Millisecond)) // pairs share a millisecond
		f.store(t, text(fmt.Sprintf("W%d", i), fmt.Sprintf("text %d", i)))
		want = append([]string{fmt.Sprintf("W%d", i)}, want...)
	}
	hidden := bridge.Incoming{WhatsAppID: "R1", From: lid, FromLID: lid, Chat: lid, Type: bridge.IncomingReaction,
		TargetID: "W0", Emoji: "👍", Timestamp: start}
	f.clock.set(start.Add(time.Second))
	f.store(t, hidden)
	want = append([]string{"R1"}, want...)

	all := f.listAll(t, Filter{Limit: 3})
	outbox := f.outboxRows(t)
	if len(all) != len(want) || len(outbox) != len(want) {
		t.Fatalf("listed %d, outbox %d, stored %d", len(all), len(outbox), len(want))
	}
	for i, e := range all {
		if e.WhatsAppID != want[i] {
			t.Errorf("position %d: %s, want %s", i, e.WhatsAppID, want[i])
		}
		if outbox[e.WebhookID] != string(e.Payload) {
			t.Errorf("%s: history body %s, outbox body %q", e.WhatsAppID, e.Payload, outbox[e.WebhookID])
		}
		apitest.ValidateWebhook(t, e.Payload)
	}
	r := all[0]
	if r.Event != webhook.TypeMessageReaction || r.Type != "reaction" || r.From != "99887766@lid" || r.FromLID != "99887766@lid" ||
		r.FromPhone != "" || r.Chat != "99887766@lid" || !r.Timestamp.Equal(start) || !r.ReceivedAt.Equal(start.Add(time.Second)) {
		t.Errorf("reaction entry %+v", r)
	}
	if w := all[len(all)-1]; w.Event != webhook.TypeMessageUpsert || w.Text != "text 0" || w.From != ana.String() ||
		w.FromPhone != ana.String() || w.FromLID != "" || w.PushName != "Ana" {
		t.Errorf("text entry %+v", w)
	}
	if byChat := f.listAll(t, Filter{Limit: 2, Chat: lid}); len(byChat) != 1 || byChat[0].WhatsAppID != "R1" {
		t.Errorf("the LID's chat: %+v", byChat)
	}
	if byChat := f.listAll(t, Filter{Limit: 2, Chat: ana}); len(byChat) != 7 || byChat[0].WhatsAppID != "W6" {
		t.Errorf("Ana's chat: %d entries", len(byChat))
	}
	if since := f.listAll(t, Filter{Limit: 500, Since: start.Add(2 * time.Millisecond)}); len(since) != 4 {
		t.Errorf("since the third millisecond: %d entries, want 4", len(since))
	}
}

// A cursor must be one List made: the message log's cursors, whose ids are
// not row ids, and spellings of a row id are refused.
func TestListRefusesForeignCursors(t *testing.T) {
	f := newFixture(t, "")
	for name, c := range map[string]string{
		"message log's":  bridge.EncodeCursor(1, "01a1feec-dd6c-7c06-8391-dc126fc74f67"),
		"zero id":        bridge.EncodeCursor(1, "0"),
		"leading zero":   bridge.EncodeCursor(1, "07"),
		"signed id":      bridge.EncodeCursor(1, "+7"),
		"negative id":    bridge.EncodeCursor(1, "-7"),
		"id overflowing": bridge.EncodeCursor(1, "99999999999999999999"),
		"not a cursor":   "!!",
	} {
		if _, _, err := f.List(context.Background(), Filter{Limit: 1, Cursor: c}); !errors.Is(err, bridge.ErrBadCursor()) {
			t.Errorf("%s cursor: %v", name, err)
		}
	}
	if _, _, err := f.List(context.Background(), Filter{}); err == nil {
		t.Error("a limit of 0 was taken")
	}
	if _, _, err := f.List(context.Background(), Filter{Limit: 1, Cursor: bridge.EncodeCursor(1, "7")}); err != nil {
		t.Errorf("a row id cursor: %v", err)
	}
}

// FuzzDecodeCursor: what the history's cursor decoder accepts is exactly
// what List encodes.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(bridge.EncodeCursor(1, "7"))
	f.Add(bridge.EncodeCursor(1, "07"))
	f.Add(bridge.EncodeCursor(1, "x"))
	f.Add("")
	f.Fuzz(func(t *testing.T, c string) {
		at, id, err := decodeCursor(c)
		if err != nil {
			if !errors.Is(err, bridge.ErrBadCursor()) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if again := bridge.EncodeCursor(at, fmt.Sprint(id)); again != c || id < 1 {
			t.Fatalf("%q decodes to %d %d, which encodes to %q", c, at, id, again)
		}
	})
}

// A message WhatsApp delivers again (our ack was lost) is stored and
// announced once; Store still succeeds, so it is acked this time.
func TestStoreOnceWhenDeliveredAgain(t *testing.T) {
	f := newFixture(t, "http://127.0.0.1:1/hook")
	f.store(t, text("W1", "hi"))
	f.store(t, text("W1", "hi"))
	if n := len(f.listAll(t, Filter{Limit: 10})); n != 1 {
		t.Errorf("%d entries", n)
	}
	if n := len(f.outboxRows(t)); n != 1 {
		t.Errorf("%d events", n)
	}
}

// failingOutbox refuses every event, as a full disk would.
type failingOutbox struct{}

func (failingOutbox) Enabled() bool                  { return true }
func (failingOutbox) Subscribed(string) (bool, bool) { return true, true }
func (failingOutbox) Enqueue(context.Context, *sql.Tx, webhook.Event) error {
	return errors.New("disk full")
}

func (failingOutbox) Requeue(context.Context, *sql.Tx, webhook.Event, string) (bool, error) {
	return false, errors.New("disk full")
}

// When the event cannot be enqueued the entry is not kept either: the
// caller refuses the ack, and WhatsApp's redelivery finds nothing stored.
func TestStoreIsAllOrNothing(t *testing.T) {
	f := newFixture(t, "")
	f.opts.Webhooks = failingOutbox{}
	err := f.batcher.Do(context.Background(), func(tx *sql.Tx) error { return f.Store(context.Background(), tx, text("W1", "hi")) })
	if err == nil {
		t.Fatal("stored although the event was refused")
	}
	if n := len(f.listAll(t, Filter{Limit: 10})); n != 0 {
		t.Errorf("%d entries kept without their event", n)
	}
	f.opts.Webhooks = f.outbox
	f.store(t, text("W1", "hi")) // webhooks off: history only
	if n := len(f.listAll(t, Filter{Limit: 10})); n != 1 {
		t.Errorf("webhooks off: %d entries", n)
	}
}

// hookReceiver is a real HTTP webhook receiver that validates every
// delivery against the API description.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []delivery
}

type delivery struct{ id, body string }

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		apitest.ValidateWebhookRequest(t, req, body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Get("webhook-id"), string(body)})
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wait waits for n deliveries and returns them.
func (r *hookReceiver) wait(t *testing.T, n int) []delivery {
	t.Helper()
	return testutil.Poll(t, 10*time.Second, func() ([]delivery, bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return append([]delivery(nil), r.got...), len(r.got) >= n
	}, "deliveries, want %d", n)
}

// A replay delivers the events received since the given time again, with
// their original webhook-ids and bodies, in the order received; an event
// still pending is not enqueued twice.
func TestReplayDeliversAgainUnderTheOriginalIDs(t *testing.T) {
	hooks := newHookReceiver(t)
	f := newFixture(t, hooks.srv.URL)
	for i := range 3 {
		f.clock.set(start.Add(time.Duration(i) * time.Minute))
		f.store(t, text(fmt.Sprintf("W%d", i), "hi"))
	}
	got, err := f.Replay(context.Background(), start, "")
	if err != nil || got != (Replayed{AlreadyPending: 3}) {
		t.Fatalf("replay of pending events: %+v %v", got, err)
	}
	f.deliver(t)
	first := hooks.wait(t, 3)
	testutil.Eventually(t, 5*time.Second, func() bool { n, _ := f.outbox.Pending(context.Background()); return n == 0 }, "still pending")

	got, err = f.Replay(context.Background(), start.Add(time.Minute), "")
	if err != nil || got != (Replayed{Enqueued: 2}) {
		t.Fatalf("replay: %+v %v", got, err)
	}
	all := hooks.wait(t, 5)
	if len(all) != 5 || all[3] != first[1] || all[4] != first[2] {
		t.Errorf("first deliveries %v\nthen %v", first, all[3:])
	}
}

// A replay with webhooks off is refused; one of no events enqueues none.
func TestReplayEdges(t *testing.T) {
	off := newFixture(t, "")
	if _, err := off.Replay(context.Background(), start, ""); !errors.Is(err, ErrWebhooksOff) {
		t.Errorf("webhooks off: %v", err)
	}
	on := newFixture(t, "http://127.0.0.1:1/hook")
	on.store(t, text("W1", "hi"))
	if got, err := on.Replay(context.Background(), start.Add(time.Hour), ""); err != nil || got != (Replayed{}) {
		t.Errorf("since after every event: %+v %v", got, err)
	}
	on.opts.Webhooks = failingOutbox{}
	if _, err := on.Replay(context.Background(), start, ""); !errors.Is(err, bridge.Internal("replay_failed", "", nil)) {
		t.Errorf("failing outbox: %v", err)
	}
}

// A replay larger than one chunk enqueues everything once.
func TestReplayInChunks(t *testing.T) {
	testutil.SkipIfShort(t, "stores more than a chunk of events")
	f := newFixture(t, "http://127.0.0.1:1/hook")
	n := replayChunk*2 + 7
	err := f.batcher.Do(context.Background(), func(tx *sql.Tx) error {
		for i := range n {
			if err := f.Store(context.Background(), tx, text(fmt.Sprintf("W%d", i), "hi")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Exec(`UPDATE webhook_outbox SET status = 'delivered', delivered_at = 1`); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Replay(context.Background(), start, ""); err != nil || got.Enqueued != n {
		t.Fatalf("replay: %+v %v, want %d", got, err, n)
	}
	if got := len(f.outboxRows(t)); got != n {
		t.Errorf("%d outbox rows, want %d", got, n)
	}
}

// The sweep deletes what is older than the retention and keeps the rest.
func TestSweepKeepsTheRetention(t *testing.T) {
	f := newFixture(t, "")
	f.store(t, text("W1", "old"))
	f.clock.set(start.Add(time.Hour))
	f.store(t, text("W2", "new"))
	f.clock.set(start.Add(f.opts.Retention + time.Minute))
	if n, err := f.Sweep(context.Background()); err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	if all := f.listAll(t, Filter{Limit: 10}); len(all) != 1 || all[0].WhatsAppID != "W2" {
		t.Errorf("kept %+v", all)
	}
}

// Run applies a short retention on its own, on schedule.
func TestRunSweepsOnSchedule(t *testing.T) {
	testutil.SkipIfShort(t, "waits for the sweep")
	f := newFixture(t, "")
	f.opts.Now, f.opts.Retention = time.Now, time.Second
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = f.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	stored := time.Now() // before the store stamps it: a slow store must not shorten the age
	f.store(t, text("W1", "short-lived"))
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.listAll(t, Filter{Limit: 1})) == 0 }, "the entry outlived the retention")
	if age := time.Since(stored); age < time.Second || age > time.Second+2*durable.SweepEvery(time.Second) {
		t.Errorf("swept %s after it was stored; retention 1s, sweep every %s", age, durable.SweepEvery(time.Second))
	}
}

func TestSweepEvery(t *testing.T) {
	for _, c := range []struct{ retention, want time.Duration }{
		{time.Second, time.Second},
		{time.Minute, 6 * time.Second},
		{720 * time.Hour, time.Hour},
	} {
		if got := durable.SweepEvery(c.retention); got != c.want {
			t.Errorf("durable.SweepEvery(%s) = %s, want %s", c.retention, got, c.want)
		}
	}
}

// Entries' bodies are JSON as the webhook shows them.
func TestEntryPayloadIsTheWebhookBody(t *testing.T) {
	f := newFixture(t, "")
	f.store(t, text("W1", "<b>&"))
	e := f.listAll(t, Filter{Limit: 1})[0]
	var p map[string]any
	if err := json.Unmarshal(e.Payload, &p); err != nil || p["text"] != "<b>&" || p["event"] != "message.upsert" {
		t.Errorf("payload %s: %v", e.Payload, err)
	}
}
