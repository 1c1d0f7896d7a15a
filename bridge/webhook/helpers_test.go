package webhook

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// testPhone is the recipient of the tests' message.status events.
var testPhone = bridge.PhoneRecipient("491510000000")

// connected is a session.status event, for tests that need any one event.
func connected() Event {
	return SessionStatus(bridge.SessionStatus{State: contract.StateConnected}, time.Now())
}

// delivery is one request the receiver got.
type delivery struct {
	id   string
	body string
	at   time.Time
}

// receiver is a real HTTP webhook receiver. answer, when non-zero, is the
// status it answers with; 200 otherwise.
type receiver struct {
	srv     *httptest.Server
	answer  atomic.Int32
	header  atomic.Value // extra "Retry-After" value, a string
	count   atomic.Int64 // deliveries accepted
	hits    atomic.Int64 // requests of any answer
	keep    bool         // record every delivery (off in benchmarks)
	mu      sync.Mutex
	got     []delivery
	arrived chan struct{}
}

func newReceiver(tb testing.TB, keep bool) *receiver {
	r := &receiver{keep: keep, arrived: make(chan struct{}, 1)}
	r.header.Store("")
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		apitest.ValidateWebhookRequest(tb, req, body)
		r.hits.Add(1)
		if s := r.answer.Load(); s != 0 {
			if ra := r.header.Load().(string); ra != "" {
				w.Header().Set("Retry-After", ra)
			}
			w.WriteHeader(int(s))
			return
		}
		if r.keep {
			r.mu.Lock()
			r.got = append(r.got, delivery{id: req.Header.Get(headerID), body: string(body), at: time.Now()})
			r.mu.Unlock()
		}
		r.count.Add(1)
		select {
		case r.arrived <- struct{}{}:
		default:
		}
	}))
	tb.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// waitCount waits until the receiver accepted n deliveries.
func (r *receiver) waitCount(tb testing.TB, n int64, limit time.Duration) {
	tb.Helper()
	testutil.Poll(tb, limit, func() (int64, bool) {
		c := r.count.Load()
		return c, c >= n
	}, "deliveries received, of %d", n)
}

type testOutbox struct {
	*Outbox
	batcher *sqlite.Batcher
}

// startOutbox opens a fresh bridge.db and runs an outbox posting to url.
func startOutbox(tb testing.TB, url string, adjust func(*Options)) testOutbox {
	tb.Helper()
	o := openOutbox(tb, url, adjust)
	o.run(tb)
	return o
}

// openOutbox opens a fresh bridge.db and an outbox on it, not yet running.
func openOutbox(tb testing.TB, url string, adjust func(*Options)) testOutbox {
	tb.Helper()
	db := testutil.OpenBridgeDB(tb)
	b := sqlite.NewBatcher(db)
	tb.Cleanup(b.Close)
	opts := Options{DB: db, Batcher: b, URL: url, Log: logr.Discard(), LocalTargets: true}
	if adjust != nil {
		adjust(&opts)
	}
	return testOutbox{Outbox: New(opts), batcher: b}
}

// run runs the outbox until the test ends.
func (o testOutbox) run(tb testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = o.Run(ctx); close(stopped) }()
	tb.Cleanup(func() {
		cancel()
		<-stopped
	})
}

func (o testOutbox) enqueue(tb testing.TB, evs ...Event) {
	tb.Helper()
	err := o.batcher.Do(context.Background(), func(tx *sql.Tx) error {
		for _, ev := range evs {
			if err := o.Enqueue(context.Background(), tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// waitDrained waits until no event is pending. The receiver counts a
// delivery before the outbox has committed it as delivered, so a test that
// saw every delivery arrive must still wait for that commit.
func (o testOutbox) waitDrained(tb testing.TB, limit time.Duration) {
	tb.Helper()
	testutil.Poll(tb, limit, func() (int, bool) {
		n, err := o.Pending(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		return n, n == 0
	}, "events still pending")
}
