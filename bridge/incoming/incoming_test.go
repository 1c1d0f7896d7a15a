package incoming_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/incoming"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// fakeMedia and fakeHistory write a row each into a real bridge.db, in
// the transaction they are given, as the media store and the inbox do.
type fakeMedia struct{}

func (fakeMedia) Register(ctx context.Context, tx *sql.Tx, in *bridge.Incoming) error {
	if in.Media == nil {
		return nil
	}
	in.Media.ID = "media_1"
	_, err := tx.ExecContext(ctx, `INSERT INTO stored (what) VALUES ('media')`)
	return err
}

type fakeHistory struct {
	fail    error
	mediaID string // the media id the entry was stored with
}

func (h *fakeHistory) Store(ctx context.Context, tx *sql.Tx, in bridge.Incoming) error {
	if in.Media != nil {
		h.mediaID = in.Media.ID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO stored (what) VALUES ('entry and event')`); err != nil {
		return err
	}
	return h.fail
}

func receiver(t *testing.T, h *fakeHistory) (incoming.Receiver, *sql.DB) {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	if _, err := db.ExecContext(context.Background(), `CREATE TABLE stored (what TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	w := sqlite.NewBatcher(db)
	t.Cleanup(w.Close)
	return incoming.Receiver{Writer: w, Media: fakeMedia{}, History: h}, db
}

func stored(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM stored`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func photo() bridge.Incoming {
	return bridge.Incoming{WhatsAppID: "W1", Type: "image", Media: &bridge.Media{MimeType: "image/jpeg"}}
}

// A photo is stored with its media record, and its history entry and event
// carry the media id the record gave it.
func TestIncomingStoresMediaThenEntry(t *testing.T) {
	h := &fakeHistory{}
	r, db := receiver(t, h)
	if err := <-r.Incoming(context.Background(), photo()); err != nil {
		t.Fatal(err)
	}
	if n := stored(t, db); n != 2 || h.mediaID != "media_1" {
		t.Fatalf("%d rows stored, entry with media id %q; want 2 and media_1", n, h.mediaID)
	}
}

// When the entry cannot be stored, neither is the media record: the error
// goes back to the link, which does not ack, and WhatsApp delivers again.
func TestIncomingStoresAllOrNothing(t *testing.T) {
	boom := errors.New("disk full")
	r, db := receiver(t, &fakeHistory{fail: boom})
	if err := <-r.Incoming(context.Background(), photo()); !errors.Is(err, boom) {
		t.Fatalf("Incoming = %v, want the history's error", err)
	}
	if n := stored(t, db); n != 0 {
		t.Fatalf("%d rows left by a failed receive, want 0", n)
	}
}
