package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The savepoint around each request is prepared once, not parsed for
// every request (issue 47: two parses a request were a seventh of the
// writer's CPU in a burst of incoming messages). 200 requests, each in a
// transaction of its own, half of them failing (ROLLBACK TO), compile each
// savepoint statement at most once per connection of the pool.
func TestBatcherPreparesItsSavepointsOnce(t *testing.T) {
	compiles := testutil.WatchCompiles()
	db := testutil.OpenBridgeDB(t)
	b := sqlite.NewBatcher(db)
	defer b.Close()
	refused := errors.New("refused")
	request := func(i int) error {
		return b.Do(context.Background(), func(*sql.Tx) error {
			if i%2 == 1 {
				return refused
			}
			return nil
		})
	}
	for i := range 2 { // warm: each statement prepared
		_ = request(i)
	}
	before := compiles.Snapshot()
	const requests = 200
	for i := range requests {
		if err := request(i); (i%2 == 1) != errors.Is(err, refused) {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	compiles.AtMost(t, before, db.Stats().OpenConnections, "200 requests")
}
