package sendqueue

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ncruces/go-sqlite3"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The reads every accepted send and every worker pass make are planned
// once and then only run: SQLite plans a statement again at each run when
// its plan depends on a bound value, as a bound LIMIT does, which made the
// reads of the accept path cost a parse each (issue 47). Each is prepared
// on one connection and run with two sets of values; a second plan fails.
func TestHotReadsArePlannedOnce(t *testing.T) {
	ctx := context.Background()
	db := testutil.OpenBridgeDBAt(t, filepath.Join(t.TempDir(), "bridge.db"))
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	reads := map[string]struct {
		query string
		runs  [2][]any
	}{
		"selectAhead":       {selectAhead, [2][]any{{int64(1), "a"}, {int64(2), "b"}}},
		"selectDueHeads":    {selectDueHeads, [2][]any{{int64(1)}, {int64(2)}}},
		"selectNextHeadDue": {selectNextHeadDue, [2][]any{{}, {}}},
		"selectStillDue":    {selectStillDue, [2][]any{{"a", int64(1)}, {"b", int64(2)}}},
	}
	for name, r := range reads {
		err := conn.Raw(func(dc any) error {
			c := dc.(interface{ Raw() *sqlite3.Conn }).Raw()
			stmt, _, err := c.Prepare(r.query)
			if err != nil {
				return err
			}
			defer func() { _ = stmt.Close() }()
			for _, args := range r.runs {
				for i, a := range args {
					switch v := a.(type) {
					case int64:
						err = stmt.BindInt64(i+1, v)
					case string:
						err = stmt.BindText(i+1, v)
					}
					if err != nil {
						return err
					}
				}
				for i := len(args); i < stmt.BindCount(); i++ { // a bound bound
					if err := stmt.BindInt64(i+1, 64); err != nil {
						return err
					}
				}
				for stmt.Step() {
				}
				if err := stmt.Reset(); err != nil {
					return err
				}
			}
			if n := stmt.Status(sqlite3.STMTSTATUS_REPREPARE, false); n != 0 {
				t.Errorf("%s was planned again %d times in 2 runs", name, n)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
