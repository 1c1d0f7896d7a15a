package testutil

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

// Compiles counts what SQLite compiles on the connections opened after
// WatchCompiles: every prepare, and every time a prepared statement is
// planned again (a bound LIMIT, a schema change), by the actions the
// compiler asks the authorizer about ("INSERT inbox", "SAVEPOINT BEGIN
// batch_item", "SELECT"; the reads of columns and the calls of functions
// are left out). A hot path whose statements are prepared once compiles
// nothing per call once every connection has prepared them, which a test
// sees without timing anything.
type Compiles struct {
	mu sync.Mutex
	n  map[string]int
}

var compiles struct {
	once sync.Once
	c    Compiles
}

// WatchCompiles counts the compiles of every connection opened from now on
// in this test binary (all of them: the counts are deltas, so tests that
// read them must not run in parallel).
func WatchCompiles() *Compiles {
	compiles.once.Do(func() {
		compiles.c.n = map[string]int{}
		sqlite3.AutoExtension(func(c *sqlite3.Conn) error {
			return c.SetAuthorizer(func(action sqlite3.AuthorizerActionCode, name3rd, name4th, _, _ string) sqlite3.AuthorizerReturnCode {
				if action != sqlite3.AUTH_READ && action != sqlite3.AUTH_FUNCTION {
					compiles.c.add(strings.TrimSpace(actionName(action) + " " + name3rd + " " + name4th))
				}
				return sqlite3.AUTH_OK
			})
		})
	})
	return &compiles.c
}

func (c *Compiles) add(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[what]++
}

// Snapshot is the counts so far.
func (c *Compiles) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// AtMost fails tb for every action compiled more than limit times since
// before (a Snapshot), but those of transactions (BEGIN and COMMIT, which
// database/sql's driver runs as text once per transaction).
func (c *Compiles) AtMost(tb testing.TB, before map[string]int, limit int, what string) {
	tb.Helper()
	var over []string
	for action, n := range c.Snapshot() {
		if d := n - before[action]; d > limit && !strings.HasPrefix(action, "TRANSACTION") {
			over = append(over, fmt.Sprintf("%s: %d", action, d))
		}
	}
	if len(over) > 0 {
		slices.Sort(over)
		tb.Errorf("%s: compiled more than %d times:\n%s", what, limit, strings.Join(over, "\n"))
	}
}

// actionName names the authorizer's actions this package's users meet.
func actionName(a sqlite3.AuthorizerActionCode) string {
	switch a {
	case sqlite3.AUTH_INSERT:
		return "INSERT"
	case sqlite3.AUTH_UPDATE:
		return "UPDATE"
	case sqlite3.AUTH_DELETE:
		return "DELETE"
	case sqlite3.AUTH_SELECT:
		return "SELECT"
	case sqlite3.AUTH_SAVEPOINT:
		return "SAVEPOINT"
	case sqlite3.AUTH_TRANSACTION:
		return "TRANSACTION"
	case sqlite3.AUTH_PRAGMA:
		return "PRAGMA"
	default:
		return fmt.Sprintf("action %d", a)
	}
}
