package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// backlogChat is the one chat of the backlogs below.
var backlogChat = bridge.PhoneRecipient("4915199999999")

// inChat is message.upsert number i of chat: its whatsapp_id is IN<i>.
func inChat(chat bridge.Recipient, i int) Event {
	return MessageUpsert(bridge.Incoming{
		WhatsAppID: "IN" + strconv.Itoa(i), From: chat, Chat: chat, Type: "text", Text: "hi", Timestamp: time.Now(),
	})
}

// chatBacklog is n events of one chat, IN0 to IN<n-1>.
func chatBacklog(n int) []Event {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = inChat(backlogChat, i)
	}
	return evs
}

// orderedReceiver records the whatsapp_id of every event it accepts, in
// order; answer decides, per whatsapp_id, what it answers (200 when nil).
type orderedReceiver struct {
	srv    *httptest.Server
	answer func(r *http.Request, id string) int
	mu     sync.Mutex
	got    []string
	count  atomic.Int64
	hits   atomic.Int64
}

func newOrderedReceiver(t *testing.T, answer func(r *http.Request, id string) int) *orderedReceiver {
	o := &orderedReceiver{answer: answer}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p upsertPayload
		_ = json.NewDecoder(r.Body).Decode(&p)
		o.hits.Add(1)
		if o.answer != nil {
			if status := o.answer(r, p.WhatsAppID); status != http.StatusOK {
				w.WriteHeader(status)
				return
			}
		}
		o.mu.Lock()
		o.got = append(o.got, p.WhatsAppID)
		o.mu.Unlock()
		o.count.Add(1)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *orderedReceiver) ids() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.got)
}

// wantIDs fails unless the receiver accepted exactly IN<from> to IN<to-1>,
// in that order.
func (o *orderedReceiver) wantIDs(t *testing.T, from, to int) {
	t.Helper()
	testutil.Poll(t, 20*time.Second, func() (int64, bool) { n := o.count.Load(); return n, n >= int64(to-from) },
		"events accepted, of %d", to-from)
	var want []string
	for i := from; i < to; i++ {
		want = append(want, "IN"+strconv.Itoa(i))
	}
	if got := o.ids(); !slices.Equal(got, want) {
		t.Errorf("accepted %v, want %v in order, each once", got, want)
	}
}

// A receiver that answers at once (503) with its backlog in one chat: each
// scan of its subscription reads that chat's head only. The rows queued
// behind the retrying head are outside the due index until it ends;
// walking them, and rejecting each, made every pass (one per event of
// every other subscription) pay for the backlog. Counted in SQLite's
// virtual machine steps of the dispatcher's own scan, no timing.
func TestScansSkipAFailingChatsBacklog(t *testing.T) {
	down := newReceiver(t, false)
	down.answer.Store(http.StatusServiceUnavailable)
	const backlog = 400
	o := startOutbox(t, "", nil)
	o.subscribe(t, "down", down.srv.URL, TypeMessageUpsert)
	o.enqueue(t, chatBacklog(backlog)...)
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { n := down.hits.Load(); return n, n >= 1 }, "the head's attempt")
	testutil.Poll(t, 10*time.Second, func() (int, bool) {
		var attempts int
		err := o.opts.DB.QueryRow(`SELECT max(attempts) FROM webhook_outbox WHERE subscription = 'down'`).Scan(&attempts)
		return attempts, err == nil && attempts >= 1
	}, "the head's failure recorded")
	steps := testutil.QuerySteps(t, o.opts.DB, o.dueScan, "down", time.Now().UnixMilli(), 0, 0)
	t.Logf("a scan of the failing subscription: %d SQLite steps beside a backlog of %d in one chat", steps, backlog)
	if steps >= backlog {
		t.Errorf("a scan of the failing subscription took %d SQLite steps beside a backlog of %d in one chat: it walks the backlog",
			steps, backlog)
	}
}

// The chat's next event is due once its head ends, delivered or a dead
// letter: a head that dies lets the rest of its chat go on, in order.
func TestADeadHeadLetsItsChatGoOn(t *testing.T) {
	r := newOrderedReceiver(t, func(_ *http.Request, id string) int {
		if id == "IN0" {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	o := startOutbox(t, r.srv.URL, func(opt *Options) { opt.MaxAge = 300 * time.Millisecond })
	const n = 10
	o.enqueue(t, chatBacklog(n)...)
	r.wantIDs(t, 1, n)
	o.waitDrained(t, 10*time.Second)
	dead, err := o.Failed(context.Background())
	if err != nil || len(dead) != 1 {
		t.Fatalf("dead letters %+v (%v), want IN0's", dead, err)
	}
}

// Crash recovery: a bridge stopped while its chat's head is under way
// (killed: the attempt's outcome never written) delivers after its restart
// the head again and then the rest of the chat, in order, nothing lost.
func TestARestartResumesEachChatInOrder(t *testing.T) {
	var hang atomic.Bool
	hang.Store(true)
	r := newOrderedReceiver(t, func(req *http.Request, _ string) int {
		if hang.Load() {
			<-req.Context().Done() // until the bridge goes away
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	first := openOutbox(t, r.srv.URL, nil)
	const n = 20
	first.enqueue(t, chatBacklog(n)...)
	ctx, kill := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = first.Run(ctx); close(stopped) }()
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { h := r.hits.Load(); return h, h >= 1 }, "the head under way")
	kill()
	<-stopped
	hang.Store(false)
	again := testOutbox{Outbox: New(Options{DB: first.opts.DB, Batcher: first.batcher, URL: r.srv.URL, Log: logr.Discard(), LocalTargets: true}),
		batcher: first.batcher}
	again.run(t)
	r.wantIDs(t, 0, n)
	again.waitDrained(t, 10*time.Second)
}
