package process

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/incoming"
	"github.com/msgbridge/msgbridge/bridge/media"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// incomingEvents is the session's Events port as the bridge's wiring has
// it for what comes in: a message goes to the receive use case
// (incoming.Receiver: history entry and event in one transaction, what the
// benchmark measures). The session puts its state changes into the outbox
// itself; nothing is sent, so there are no receipts to apply.
type incomingEvents struct {
	incoming.Receiver
	webhooks *webhook.Outbox
}

var _ whatsapp.Events = incomingEvents{}

func (incomingEvents) Reconnected() {}

// outboxOnlyEvents is the incoming path before the incoming history: the
// event alone, in a transaction of its own. The benchmark's baseline.
type outboxOnlyEvents struct{ incomingEvents }

func (e outboxOnlyEvents) Incoming(ctx context.Context, in bridge.Incoming) <-chan error {
	c := make(chan error, 1)
	c <- e.webhooks.EnqueueNow(ctx, webhook.MessageUpsert(in))
	return c
}

// arrivals is a webhook receiver that notes when each message.upsert
// arrived, by whatsapp_id, and in which order.
type arrivals struct {
	mu    sync.Mutex
	at    map[string]time.Time
	text  map[string]string // each message's text, by whatsapp_id
	order []string          // whatsapp ids by first arrival
	drops int               // session.status events that said disconnected
	srv   *httptest.Server
	wake  chan struct{}
}

func newArrivals(b testing.TB) *arrivals {
	a := &arrivals{at: map[string]time.Time{}, text: map[string]string{}, wake: make(chan struct{}, 1)}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Event      string `json:"event"`
			WhatsAppID string `json:"whatsapp_id"`
			State      string `json:"state"`
			Text       string `json:"text"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			return
		}
		a.mu.Lock()
		if ev.Event == webhook.TypeSessionStatus && ev.State == string(contract.StateDisconnected) {
			a.drops++
		}
		if ev.Event != webhook.TypeMessageUpsert {
			a.mu.Unlock()
			return
		}
		if _, seen := a.at[ev.WhatsAppID]; !seen {
			a.at[ev.WhatsAppID] = now
			a.text[ev.WhatsAppID] = ev.Text
			a.order = append(a.order, ev.WhatsAppID)
		}
		a.mu.Unlock()
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}))
	b.Cleanup(a.srv.Close)
	return a
}

// wait waits until every id arrived and returns their arrival times.
func (a *arrivals) wait(b testing.TB, ids []string) []time.Time {
	b.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		a.mu.Lock()
		out := make([]time.Time, 0, len(ids))
		for _, id := range ids {
			if t, ok := a.at[id]; ok {
				out = append(out, t)
			}
		}
		a.mu.Unlock()
		if len(out) == len(ids) {
			return out
		}
		select {
		case <-a.wake:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			b.Fatalf("%d of %d messages reached the webhook", len(out), len(ids))
		}
	}
}

// inProcessBridge is the bridge's incoming path, built as app.go builds it
// (bridge.db, its writer, the outbox, the history, the session), linked to
// the simulator's account; events picks the incoming port.
func inProcessBridge(b *testing.B, sim *wasim.Simulator, hookURL string, events func(incomingEvents) whatsapp.Events) {
	b.Helper()
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "credentials"), 0o700); err != nil {
		b.Fatal(err)
	}
	db := testutil.OpenBridgeDBAt(b, filepath.Join(dir, "bridge.db"))
	writer := sqlite.NewBatcher(db)
	b.Cleanup(writer.Close)
	outbox := webhook.New(webhook.Options{DB: db, Batcher: writer, URL: hookURL, Log: logr.Discard(), LocalTargets: true})
	history := inbox.New(inbox.Options{DB: db, Batcher: writer, Webhooks: outbox, Retention: time.Hour, Log: logr.Discard()})
	ctx, cancel := context.WithCancel(context.Background())
	m, err := whatsapp.New(ctx, whatsapp.Options{
		CredentialsDir: filepath.Join(dir, "credentials"), SpoolDir: dir, MasterKey: testutil.TestKey(), DB: db,
		Batcher: writer, HeartbeatInterval: 15 * time.Second, Log: logr.Discard(),
		Server: &whatsapp.Server{HTTPClient: sim.HTTPClient(), RootKey: sim.RootPublicKey()},
		Outbox: outbox,
		Events: events(incomingEvents{
			Receiver: incoming.Receiver{Writer: writer, Media: (*media.Store)(nil), History: history}, // text only: no media
			webhooks: outbox,
		}),
	})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{m.Run, outbox.Run} {
		wg.Go(func() { _ = run(ctx) })
	}
	b.Cleanup(func() { cancel(); wg.Wait() })
	qr, err := m.QR(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := sim.Phone(testAccount).ScanQR(ctx, qr); err != nil {
		b.Fatal(err)
	}
	testutil.Eventually(b, 30*time.Second, func() bool { return m.Status().Connected() }, "not linked")
}

// incomingContacts is how many contacts write at once in the throughput
// phase.
const incomingContacts = 4

// BenchmarkIncomingToWebhook: texts from simulated contacts, through the
// real whatsmeow client, the bridge's incoming path (stored before the
// ack) and the webhook outbox, to a loopback receiver. b.N texts from 4
// contacts at once give the throughput; then 200 texts one at a time (the
// next sent when the previous arrived) give the latency from a contact's
// send to the webhook's arrival. "inbox" is the bridge (history entry and
// event in one transaction); "outbox-only", the baseline in the same run,
// is the path before the history (the event alone).
//
//	go test -run=NONE -bench=IncomingToWebhook -benchtime=2000x ./test/process
func BenchmarkIncomingToWebhook(b *testing.B) {
	for _, c := range []struct {
		name   string
		events func(incomingEvents) whatsapp.Events
	}{
		{"inbox", func(e incomingEvents) whatsapp.Events { return e }},
		{"outbox-only", func(e incomingEvents) whatsapp.Events { return outboxOnlyEvents{e} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			sim := wasim.Start(b)
			hooks := newArrivals(b)
			inProcessBridge(b, sim, hooks.srv.URL, c.events)
			to := types.NewJID(testAccount, types.DefaultUserServer)
			contacts := make([]*wasim.User, incomingContacts)
			for i := range contacts {
				contacts[i] = sim.Contact(fmt.Sprintf("49151000010%02d", i), "Contact")
				hooks.wait(b, []string{sendB(b, contacts[i], to, "warm-up")}) // sessions set up
			}
			b.ResetTimer()
			throughput(b, hooks, contacts, to)
			b.StopTimer()
			latency(b, hooks, contacts[0], to, 200)
		})
	}
}

func sendB(b testing.TB, u *wasim.User, to types.JID, text string) string {
	id, err := u.SendText(context.Background(), to, text)
	if err != nil {
		b.Fatal(err)
	}
	return id
}

// outOfOrder counts the messages that arrived after a later one of their
// chat; chats holds each chat's ids in the order they were sent.
func (a *arrivals) outOfOrder(chats [][]string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	type place struct{ chat, seq int }
	sent := map[string]place{}
	for c, ids := range chats {
		for i, id := range ids {
			sent[id] = place{c, i}
		}
	}
	latest := make([]int, len(chats))
	for i := range latest {
		latest[i] = -1
	}
	n := 0
	for _, id := range a.order {
		p, ok := sent[id]
		if !ok {
			continue
		}
		if p.seq < latest[p.chat] {
			n++
		}
		latest[p.chat] = max(latest[p.chat], p.seq)
	}
	return n
}

// throughput has the contacts send b.N texts together and reports the
// rate at which they reached the webhook; it returns each contact's ids in
// the order it sent them.
func throughput(b *testing.B, hooks *arrivals, contacts []*wasim.User, to types.JID) [][]string {
	b.Helper()
	ids := make([][]string, len(contacts))
	start := time.Now()
	var wg sync.WaitGroup
	for i, u := range contacts {
		wg.Go(func() {
			for n := i; n < b.N; n += len(contacts) {
				ids[i] = append(ids[i], sendB(b, u, to, "text "+fmt.Sprint(n)))
			}
		})
	}
	wg.Wait()
	// The simulator's side: how fast its contacts got the texts out (each
	// send returns once the simulated server took it). The bridge is the
	// slower side when msg/s is below it.
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sim-msg/s")
	arrived := hooks.wait(b, slices.Concat(ids...))
	last := slices.MaxFunc(arrived, func(x, y time.Time) int { return x.Compare(y) })
	b.ReportMetric(float64(b.N)/last.Sub(start).Seconds(), "msg/s")
	b.ReportMetric(0, "ns/op")
	return ids
}

// latency sends n texts one at a time and reports the 50th and 99th
// percentiles of send-to-webhook.
func latency(b *testing.B, hooks *arrivals, u *wasim.User, to types.JID, n int) {
	b.Helper()
	took := make([]time.Duration, n)
	for i := range took {
		t0 := time.Now()
		id := sendB(b, u, to, "one at a time")
		took[i] = hooks.wait(b, []string{id})[0].Sub(t0)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[n/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[n*99/100].Microseconds())/1000, "p99-ms")
}
