package groupadmin

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// One request per key at a time: a repeat while the first is being
// carried out is refused (idempotency_key_in_flight), not run a second
// time; once it answered, the repeat gets its answer; an action that
// never reached WhatsApp (a fault of the bridge) frees its key.
func TestActionsOneRequestPerKey(t *testing.T) {
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	actions := New(sendqueue.NewAnswers(db, writer, clock), bridge.SendRate{}, clock, logr.Discard())
	ctx := context.Background()

	entered, release := make(chan struct{}), make(chan struct{})
	runs := 0
	slow := Action{Key: "k1", Hash: "h1", Cost: 1, Refused: refusedForTest,
		Run: func(context.Context) (sendqueue.Answer, error) {
			runs++
			close(entered)
			<-release
			return sendqueue.Answer{Status: 200, Body: []byte(`{"ok":true}`)}, nil
		}}
	done := make(chan sendqueue.Answer)
	go func() {
		answer, err := actions.Do(ctx, slow)
		if err != nil {
			t.Error(err)
		}
		done <- answer
	}()
	<-entered
	if _, err := actions.Do(ctx, slow); bridge.ErrorOf(err).Code != bridge.CodeIdempotencyKeyInFlight {
		t.Fatalf("a repeat in flight: %v", err)
	}
	close(release)
	first := <-done
	again, err := actions.Do(ctx, slow)
	if err != nil || again.Status != first.Status || string(again.Body) != string(first.Body) || runs != 1 {
		t.Fatalf("the repeat: %+v %v after %d runs", again, err, runs)
	}

	broken := Action{Key: "k2", Hash: "h2", Cost: 1, Refused: refusedForTest,
		Run: func(context.Context) (sendqueue.Answer, error) {
			return sendqueue.Answer{}, bridge.Internal(bridge.CodeInternal, "boom", errors.New("boom"))
		}}
	if _, err := actions.Do(ctx, broken); bridge.ErrorKind(err) != bridge.KindInternal {
		t.Fatalf("a fault: %v", err)
	}
	broken.Run = func(context.Context) (sendqueue.Answer, error) { return sendqueue.Answer{Status: 204}, nil }
	if answer, err := actions.Do(ctx, broken); err != nil || answer.Status != 204 {
		t.Fatalf("the freed key carried out again: %+v %v", answer, err)
	}
}

func refusedForTest(err error) sendqueue.Answer {
	return sendqueue.Answer{Status: 403, Body: []byte(bridge.ErrorOf(err).Code)}
}
