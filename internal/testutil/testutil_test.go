package testutil

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// recorder is a testing.TB whose Fatalf records the message and ends the
// goroutine, as the real one does; run calls f on a goroutine of its own.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(t *testing.T, f func(tb testing.TB)) string {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failure
}

func TestWait(t *testing.T) {
	start := time.Now()
	calls := 0
	if !Wait(time.Second, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("Wait: %d calls", calls)
	}
	if took := time.Since(start); took < 2*PollInterval || took > 500*time.Millisecond {
		t.Errorf("three checks took %s", took)
	}
	start = time.Now()
	if Wait(50*time.Millisecond, func() bool { return false }) {
		t.Error("Wait reported a condition that never held")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("gave up after %s, before the timeout", took)
	}
}

func TestEventuallyFormatsItsMessageAtTheFailure(t *testing.T) {
	var stderr LockedBuffer
	failure := run(t, func(tb testing.TB) {
		Eventually(tb, 30*time.Millisecond, func() bool {
			_, _ = stderr.Write([]byte("written while waiting"))
			return false
		}, "waiting for %s; stderr %s", "the bridge", &stderr)
	})
	if !strings.Contains(failure, "after 30ms: waiting for the bridge; stderr written while waiting") {
		t.Errorf("failure %q", failure)
	}
	if failure := run(t, func(tb testing.TB) { Eventually(tb, time.Second, func() bool { return true }) }); failure != "" {
		t.Errorf("a condition that holds failed: %q", failure)
	}
}

func TestPoll(t *testing.T) {
	n := 0
	var got int
	failure := run(t, func(tb testing.TB) {
		got = Poll(tb, time.Second, func() (int, bool) { n++; return n, n == 4 })
	})
	if failure != "" || got != 4 {
		t.Errorf("Poll returned %d, failure %q", got, failure)
	}
	failure = run(t, func(tb testing.TB) {
		Poll(tb, 30*time.Millisecond, func() (string, bool) { return "3 of 5", false }, "deliveries")
	})
	if failure != "after 30ms: deliveries; last: 3 of 5" {
		t.Errorf("failure %q", failure)
	}
}

func TestReceive(t *testing.T) {
	ch := make(chan int, 3)
	ch <- 1
	ch <- 2
	ch <- 3
	var got int
	failure := run(t, func(tb testing.TB) { got = Receive(tb, time.Second, ch, func(v int) bool { return v >= 2 }) })
	if failure != "" || got != 2 || len(ch) != 1 {
		t.Errorf("Receive returned %d (failure %q), %d left", got, failure, len(ch))
	}
	close(ch)
	failure = run(t, func(tb testing.TB) { Receive(tb, time.Second, ch, func(int) bool { return false }, "event %d", 7) })
	if failure != "the channel closed: event 7" {
		t.Errorf("closed: %q", failure)
	}
	failure = run(t, func(tb testing.TB) { Receive(tb, 20*time.Millisecond, make(chan int), func(int) bool { return true }) })
	if failure != "after 20ms: the condition never held" {
		t.Errorf("timeout: %q", failure)
	}
}

func TestKeyIsAFreshCopyOfTestKeyHex(t *testing.T) {
	k := TestKey()
	if hex.EncodeToString(k) != TestKeyHex || len(k) != sqlite.MasterKeyLen {
		t.Fatalf("TestKey %x", k)
	}
	k[0] = 0
	if TestKey()[0] != 0xab {
		t.Error("a caller changed the shared key")
	}
}

// The database is real and encrypted: it reopens with TestKey, and the file
// does not hold what was written in plain text.
func TestOpenBridgeDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.db")
	db := OpenBridgeDBAt(t, path)
	ctx := context.Background()
	const marker = "plaintext-marker-4915112345678"
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (?)`, marker); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := OpenBridgeDBAt(t, path).QueryRowContext(ctx, `SELECT v FROM t`).Scan(&v); err != nil || v != marker {
		t.Fatalf("reopened: %q, %v", v, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(marker)) {
		t.Error("bridge.db holds the marker in plain text")
	}
	if err := OpenBridgeDB(t).PingContext(ctx); err != nil {
		t.Error(err)
	}
}

func TestLockedBufferUnderConcurrentWrites(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Errorf("%d bytes", len(got))
	}
}
