package metrics

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// session is the send queue's Sender: not linked until ready is set.
type session struct {
	ready atomic.Bool
	ids   atomic.Int64
}

func (s *session) Send(context.Context, bridge.Outgoing) error {
	if !s.ready.Load() {
		return bridge.ErrNotLinked
	}
	return nil
}

func (s *session) NewMessageID() string { return fmt.Sprintf("3EB0%d", s.ids.Add(1)) }
func (s *session) Ready() bool          { return s.ready.Load() }

// The message and attempt counters as the real send queue moves them: a
// message counts as queued when accepted, and the first attempt it records
// while no session is linked counts as a failed attempt, like the log's
// attempts column says (W9: both stayed at 0).
func TestCountersFollowTheQueue(t *testing.T) {
	ctx := context.Background()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	m, sess := New(), &session{}
	msgLog := sendqueue.NewMessageLog(sendqueue.MessageLogOptions{DB: db, Batcher: writer, Observer: m, Log: logr.Discard()})
	q := sendqueue.New(sendqueue.Options{Log: msgLog, Sender: sess, Schedule: []time.Duration{10 * time.Millisecond}})

	req := sendqueue.Request{Recipient: bridge.PhoneRecipient("4915112345678"), Items: []sendqueue.Item{
		{Type: bridge.TypeText, Text: "one"}, {Type: bridge.TypeText, Text: "two"},
	}}
	res, err := q.Submit(ctx, req) // no session: both wait for their retry
	if err != nil {
		t.Fatal(err)
	}
	sess.ready.Store(true)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { _ = q.Run(runCtx); close(stopped) }()
	defer func() { stop(); <-stopped }()
	for _, msg := range res.Messages {
		waitSent(t, q, msg.ID)
	}
	if _, err := q.AdvanceStatus(ctx, []string{res.Messages[0].WhatsAppID}, bridge.StatusRead); err != nil {
		t.Fatal(err)
	}

	fams := scrape(t, m)
	for _, tt := range []struct {
		family, label, value string
		want                 float64
	}{
		{"msgbridge_messages_total", "status", "queued", 2},
		{"msgbridge_messages_total", "status", "sent", 2},
		{"msgbridge_messages_total", "status", "read", 1},
		{"msgbridge_messages_total", "status", "failed", 0},
		{"msgbridge_send_attempts_total", "outcome", "failure", 2},
		{"msgbridge_send_attempts_total", "outcome", "success", 2},
		{"msgbridge_send_duration_seconds", "", "", 4},
	} {
		if got := value(t, fams, tt.family, tt.label, tt.value); got != tt.want {
			t.Errorf("%s{%s=%q} = %v, want %v", tt.family, tt.label, tt.value, got, tt.want)
		}
	}
}

func waitSent(t *testing.T, q *sendqueue.Queue, id string) {
	t.Helper()
	testutil.Poll(t, 5*time.Second, func() (bridge.Status, bool) {
		msg, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return msg.Status, msg.Status == bridge.StatusSent
	}, "message %s not sent", id)
}
