package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// clockFixture is a fixture whose clock the test moves.
func clockFixture(t testing.TB, f *fixture) func(time.Duration) {
	var mu sync.Mutex
	clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f.open(func(l *MessageLogOptions, _ *Options) {
		l.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	})
	return func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
}

// MESSAGE_RETENTION: finished messages (sent, failed) whose last change is
// older than the retention are deleted; a recent one and a Queued one,
// however old, stay.
func TestSweepFinishedKeepsQueuedAndRecent(t *testing.T) {
	f := newFixture(t, time.Hour)
	advance := clockFixture(t, f)
	f.sender.results = []error{nil, errors.New("down")}
	sent := f.submit(textRequest("sent")).Messages[0]
	queued := f.submit(textRequest("queued")).Messages[0] // waits an hour for its retry
	advance(40 * 24 * time.Hour)
	// Another chat: behind "queued", due by now, its immediate attempt would
	// wait for the worker (none runs here) and stay Queued.
	other := textRequest("recent")
	other.Recipient = bridge.PhoneRecipient("4915199999999")
	recent := f.submit(other).Messages[0] // sent: results ran out
	if recent.Status != bridge.StatusSent {
		t.Fatalf("the recent message: %+v, want it sent (finished)", recent)
	}
	n, err := f.q.SweepFinished(context.Background(), 720*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("swept %d (%v), want the one old finished message", n, err)
	}
	if _, err := f.q.Get(context.Background(), sent.ID); bridge.ErrorKind(err) != bridge.KindNotFound {
		t.Errorf("the old sent message is still there: %v", err)
	}
	for _, id := range []string{queued.ID, recent.ID} {
		if _, err := f.q.Get(context.Background(), id); err != nil {
			t.Errorf("message %s was swept: %v", id, err)
		}
	}
}

// BenchmarkMessageLogSize: bridge.db's size after b.N finished texts, and
// after MESSAGE_RETENTION swept them (the freed pages given back by the
// incremental vacuum). The baseline in the same run is the full size. The
// file is on /dev/shm when there is one: sizes do not depend on the file
// system, and a loaded disk's fsyncs would make 10,000 sends take minutes.
//
//	go test -run=NONE -bench=MessageLogSize -benchtime=10000x ./bridge/sendqueue
func BenchmarkMessageLogSize(b *testing.B) {
	dir := b.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "msgbridge-bench-"); err == nil {
		dir = shm
		b.Cleanup(func() { _ = os.RemoveAll(shm) })
	}
	path := filepath.Join(dir, "bridge.db")
	db := testutil.OpenBridgeDBAt(b, path)
	writer := sqlite.NewBatcher(db)
	defer writer.Close()
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	q := New(Options{Log: NewMessageLog(MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard(), Now: clock}), Sender: &fakeSender{ready: true}})
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 16 { // concurrent requests share group commits
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				// A chat each: requests to one chat wait for each other.
				req := Request{Recipient: bridge.PhoneRecipient(fmt.Sprintf("49151%08d", i)), Items: []Item{{Type: bridge.TypeText, Text: fmt.Sprintf("message %d of the benchmark", i)}}}
				if _, err := q.Submit(context.Background(), req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	checkpointDB(b, db)
	full := dbSize(b, path)
	mu.Lock()
	now = now.Add(721 * time.Hour)
	mu.Unlock()
	if n, err := q.SweepFinished(context.Background(), 720*time.Hour); err != nil || n != int64(b.N) {
		b.Fatalf("swept %d (%v)", n, err)
	}
	checkpointDB(b, db)
	b.ReportMetric(float64(full)/float64(b.N)*10000/1e6, "MB/10k-msgs")
	b.ReportMetric(float64(full)/1e6, "MB-full")
	b.ReportMetric(float64(dbSize(b, path))/1e6, "MB-after-retention")
	b.ReportMetric(0, "ns/op")
}

func checkpointDB(tb testing.TB, db *sql.DB) {
	tb.Helper()
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
}

func dbSize(tb testing.TB, path string) int64 {
	tb.Helper()
	var total int64
	for _, p := range []string{path, path + "-wal"} {
		if info, err := os.Stat(p); err == nil {
			total += info.Size()
		}
	}
	return total
}
