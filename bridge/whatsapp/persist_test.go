package whatsapp

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// A restart that changes nothing (an unlinked bridge) writes nothing to
// bridge.db: a commit on a fresh write-ahead log costs disk syncs before
// the restarted bridge's first answer. A first start stores its state.
func TestUnchangedRestartWritesNothing(t *testing.T) {
	f := newBridgeFiles(t)
	db := testutil.OpenBridgeDBAt(t, filepath.Join(f.dir, "bridge.db"))
	events := &fakeEvents{}
	startAt := func(now time.Time) {
		m, err := New(context.Background(), Options{
			CredentialsDir: filepath.Join(f.dir, "credentials"), MasterKey: f.key, DB: db,
			Log: testutil.Logger(t), Events: events, Messages: events, Outbox: events, Now: func() time.Time { return now },
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = m.creds.close()
	}
	first := time.UnixMilli(1_700_000_000_000)
	startAt(first)
	startAt(first.Add(time.Hour))
	var updated int64
	if err := db.QueryRow(`SELECT updated_at FROM session_state WHERE id = 1`).Scan(&updated); err != nil {
		t.Fatal(err)
	}
	if updated != first.UnixMilli() {
		t.Errorf("the restart wrote the session state again (updated_at %d, first start %d)", updated, first.UnixMilli())
	}
}
