// Package testutil holds the helpers the tests of several packages share:
// bounded waits, the test encryption key, a real encrypted bridge.db, and a
// buffer a child process or logger may write while the test reads it.
// Only tests import it.
package testutil

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// PollInterval is how often the waits below check their condition: short
// enough that a wait ends within a few milliseconds of the condition
// holding, long enough that a check over HTTP or SQLite stays cheap.
const PollInterval = 10 * time.Millisecond

// Wait checks cond every PollInterval until it holds, for at most timeout,
// and reports whether it held. It is for the callers that gather their own
// failure message; the others use Eventually or Poll.
func Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(PollInterval)
	}
	return true
}

// Eventually waits until cond holds and fails tb after timeout. msgAndArgs
// is a format and its arguments; they are formatted at the failure, so an
// argument that is a fmt.Stringer (a *LockedBuffer) shows its content then.
func Eventually(tb testing.TB, timeout time.Duration, cond func() bool, msgAndArgs ...any) {
	tb.Helper()
	if !Wait(timeout, cond) {
		tb.Fatalf("after %s: %s", timeout, message(msgAndArgs))
	}
}

// Poll calls get until it reports done and returns the value it returned
// then. After timeout it fails tb with msgAndArgs (see Eventually) and the
// last value, so the failure says how far the wait got.
func Poll[T any](tb testing.TB, timeout time.Duration, get func() (T, bool), msgAndArgs ...any) T {
	tb.Helper()
	var last T
	if !Wait(timeout, func() bool {
		var done bool
		last, done = get()
		return done
	}) {
		tb.Fatalf("after %s: %s; last: %+v", timeout, message(msgAndArgs), last)
	}
	return last
}

// Receive reads ch until ok holds for a value and returns that value. It
// fails tb when ch closes first or after timeout.
func Receive[T any](tb testing.TB, timeout time.Duration, ch <-chan T, ok func(T) bool, msgAndArgs ...any) T {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case v, open := <-ch:
			if !open {
				tb.Fatalf("the channel closed: %s", message(msgAndArgs))
			}
			if ok(v) {
				return v
			}
		case <-deadline.C:
			tb.Fatalf("after %s: %s", timeout, message(msgAndArgs))
		}
	}
}

func message(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return "the condition never held"
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

// SkipIfShort skips tb under go test -short (make test-unit). why says what
// makes the test slow: "starts a bridge process", "needs envtest", ...
func SkipIfShort(tb testing.TB, why string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: " + why)
	}
}

// TestKeyHex is the test encryption key as ENCRYPTION_KEY takes it.
const TestKeyHex = "abababababababababababababababababababababababababababababababab"

// TestKey returns the test encryption key, TestKeyHex decoded: a fresh
// copy each time, so that no test can change another's key.
func TestKey() []byte {
	key, err := hex.DecodeString(TestKeyHex)
	if err != nil || len(key) != sqlite.MasterKeyLen {
		panic("testutil: TestKeyHex is not a master key")
	}
	return key
}

// OpenBridgeDB opens a new encrypted bridge.db in tb's temp dir with
// TestKey; it is closed at cleanup.
func OpenBridgeDB(tb testing.TB) *sql.DB {
	tb.Helper()
	return OpenBridgeDBAt(tb, filepath.Join(tb.TempDir(), "bridge.db"))
}

// OpenBridgeDBAt opens (or creates) the bridge.db at path with TestKey, for
// a test that reopens a database or reads the one a bridge process left;
// it is closed at cleanup.
func OpenBridgeDBAt(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sqlite.OpenBridgeDB(context.Background(), path, TestKey())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// LockedBuffer is a bytes.Buffer safe for concurrent use: a child process's
// stderr or a logger writes it while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns a copy of what was written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
