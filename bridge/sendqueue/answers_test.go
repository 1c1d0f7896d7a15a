package sendqueue

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// A group action's key: carried out once, answered the same after; another
// request under it is refused; a key claimed by a process that ended
// before answering is carried out again; a released key is free.
func TestAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	a := NewAnswers(db, writer, func() time.Time { return now })

	if got, err := a.Claim(ctx, "k", "h1"); got != nil || err != nil {
		t.Fatalf("first claim: %v %v", got, err)
	}
	// The process ended before answering: the next claim carries it out.
	if got, err := a.Claim(ctx, "k", "h1"); got != nil || err != nil {
		t.Fatalf("claim after a crash: %v %v", got, err)
	}
	if err := a.Keep(ctx, "k", Answer{Status: 201, Body: []byte(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Claim(ctx, "k", "h1"); err != nil || got == nil || got.Status != 201 || string(got.Body) != `{"x":1}` {
		t.Fatalf("repeat: %v %v", got, err)
	}
	if _, err := a.Claim(ctx, "k", "h2"); bridge.ErrorOf(err).Code != "idempotency_key_reused" {
		t.Fatalf("another request: %v", err)
	}
	if _, err := a.Claim(ctx, "free", "h"); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, "free"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Claim(ctx, "free", "other"); err != nil {
		t.Fatalf("a released key: %v", err)
	}
	now = now.Add(IdempotencyWindow)
	if got, err := a.Claim(ctx, "k", "h2"); got != nil || err != nil {
		t.Fatalf("after the window: %v %v", got, err)
	}
}
