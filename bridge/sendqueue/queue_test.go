package sendqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Sent on the immediate attempt: the answer says so (the API's 200), the
// log agrees, the attachment is gone and the day counts one success.
func TestImmediateSuccess(t *testing.T) {
	f := newFixture(t, time.Hour)
	doc := spooled(t, t.TempDir(), "report.pdf", "%PDF-1.7")
	res := f.submit(Request{Recipient: alice, Items: []Item{
		{Type: bridge.TypeText, Text: "first"},
		{Type: bridge.TypeDocument, Text: "caption", File: doc},
	}})
	if !allSent(res) || res.Replay || len(res.Messages) != 2 {
		t.Fatalf("result %+v", res)
	}
	calls := f.sender.calls()
	if len(calls) != 2 || calls[0].out.Text != "first" || calls[1].out.FilePath != doc.Path || calls[1].out.FileName != "report.pdf" ||
		calls[1].out.Recipient != alice || calls[1].out.Type != bridge.TypeDocument {
		t.Fatalf("sent %+v", calls)
	}
	for i, m := range res.Messages {
		if m.Status != bridge.StatusSent || m.Attempts != 1 || m.RetryCount != 0 || m.WhatsAppID != calls[i].out.ID {
			t.Errorf("item %d: %+v", i, m)
		}
		if got := f.waitStatus(m.ID, bridge.StatusSent); got.Attempts != 1 || got.LastError != "" {
			t.Errorf("logged %+v", got)
		}
	}
	if _, err := os.Stat(doc.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("attachment left in the spool: %v", err)
	}
	if ok, failed := f.daily(); ok != 2 || failed != 0 {
		t.Errorf("rollup %d sent, %d failed", ok, failed)
	}
	if n, err := f.q.Depth(context.Background()); err != nil || n != 0 {
		t.Errorf("depth %d, %v", n, err)
	}
}

// Failures wait each delay of the schedule, retry_count counts the retries
// needed, and success on the last retry is Sent.
func TestRetriesFollowTheSchedule(t *testing.T) {
	schedule := []time.Duration{30 * time.Millisecond, 60 * time.Millisecond}
	f := newFixture(t, schedule...)
	f.sender.results = []error{errors.New("timeout"), bridge.ErrNotLinked, nil}
	res := f.submit(textRequest("hello"))
	m := res.Messages[0]
	if allSent(res) || m.Status != bridge.StatusQueued || m.Attempts != 1 || m.RetryCount != 0 || m.LastError != "timeout" {
		t.Fatalf("after the immediate attempt: %+v", res)
	}
	f.run()
	got := f.waitStatus(m.ID, bridge.StatusSent)
	if got.Attempts != 3 || got.RetryCount != 2 || got.LastError != "" {
		t.Errorf("logged %+v", got)
	}
	calls := f.sender.calls()
	if len(calls) != 3 {
		t.Fatalf("%d attempts", len(calls))
	}
	for i, d := range schedule {
		// Due times are stored in milliseconds.
		if gap := calls[i+1].at.Sub(calls[i].at); gap < d-time.Millisecond {
			t.Errorf("retry %d after %s, schedule says %s", i+1, gap, d)
		}
		if calls[i+1].out.ID != m.WhatsAppID {
			t.Errorf("retry %d has WhatsApp ID %s, not %s", i+1, calls[i+1].out.ID, m.WhatsAppID)
		}
	}
	if ok, failed := f.daily(); ok != 1 || failed != 0 {
		t.Errorf("rollup %d sent, %d failed", ok, failed)
	}
	if ev := f.events.events(); len(ev) != 1 || ev[0] != m.WhatsAppID+" Sent" {
		t.Errorf("events %v", ev)
	}
}

func TestFailedAfterTheLastRetry(t *testing.T) {
	f := newFixture(t, 10*time.Millisecond, 20*time.Millisecond)
	f.sender.results = []error{errors.New("e1"), errors.New("e2"), errors.New("e3"), nil}
	doc := spooled(t, t.TempDir(), "a.pdf", "%PDF")
	m := f.submit(Request{Recipient: alice, Items: []Item{{Type: bridge.TypeDocument, File: doc}}}).Messages[0]
	f.run()
	got := f.waitStatus(m.ID, bridge.StatusFailed)
	if got.Attempts != 3 || got.RetryCount != 2 || got.LastError != "e3" {
		t.Errorf("logged %+v", got)
	}
	if n := len(f.sender.calls()); n != 3 {
		t.Errorf("%d attempts, want 1 + len(schedule)", n)
	}
	// The worker removes the attachment once the outcome has committed,
	// which is when waitStatus can see it.
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, err := os.Stat(doc.Path)
		return errors.Is(err, os.ErrNotExist)
	}, "attachment of a Failed message left in the spool")
	f.wantFailedOnce(m)
}

// With no session the request is accepted all the same, its first attempt
// recorded as failed in the insert, and the retries send it once a session
// is ready.
func TestNoSessionThenReady(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond, 20*time.Millisecond)
	f.sender.setReady(false)
	m := f.submit(textRequest("hello")).Messages[0]
	if m.Status != bridge.StatusQueued || m.Attempts != 1 || m.LastError != bridge.ErrNotLinked.Error() || len(f.sender.calls()) != 0 {
		t.Fatalf("accepted %+v; %d sends", m, len(f.sender.calls()))
	}
	f.sender.setReady(true)
	f.run()
	if got := f.waitStatus(m.ID, bridge.StatusSent); got.Attempts != 2 || got.RetryCount != 1 {
		t.Errorf("logged %+v", got)
	}
}

// No schedule and no session: Failed at insert, counted and reported in
// the same transaction.
func TestNoSessionNoSchedule(t *testing.T) {
	f := newFixture(t)
	f.sender.setReady(false)
	m := f.submit(textRequest("hello")).Messages[0]
	if m.Status != bridge.StatusFailed || m.Attempts != 1 {
		t.Fatalf("accepted %+v", m)
	}
	f.wantFailedOnce(m)
}

// A message whose immediate attempt was cut short by a crash (its outcome
// never stored) is attempted after the restart, with the same WhatsApp ID.
func TestAttemptedAfterRestart(t *testing.T) {
	f := newFixture(t, time.Hour)
	inSend, crash := make(chan struct{}), make(chan struct{})
	f.sender.during = func(bridge.Outgoing) {
		close(inSend)
		<-crash
	}
	submitted := make(chan Result, 1)
	go func() {
		res, _ := f.q.Submit(context.Background(), textRequest("survives"))
		submitted <- res
	}()
	<-inSend
	f.close() // the process dies while the message is on its way
	close(crash)
	m := (<-submitted).Messages[0]

	f.sender.mu.Lock()
	f.sender.during = nil
	f.sender.mu.Unlock()
	f.open(nil)
	if n, err := f.q.Depth(context.Background()); err != nil || n != 1 {
		t.Fatalf("after the restart %d due, %v", n, err)
	}
	f.run()
	got := f.waitStatus(m.ID, bridge.StatusSent)
	calls := f.sender.calls()
	if len(calls) != 2 || calls[1].out.ID != m.WhatsAppID || calls[1].out.Text != "survives" || got.Attempts != 1 {
		t.Errorf("after the restart: %+v, sends %+v", got, calls)
	}
}

// A receipt can arrive while its attempt is in flight (WhatsApp acks the
// send after the phone's receipt, or the ack is lost): the attempt then
// records its count but not its outcome, which the receipt overtook.
func TestReceiptBeforeTheAttemptIsRecorded(t *testing.T) {
	for _, sendErr := range []error{nil, errors.New("ack timed out")} {
		t.Run(errString(sendErr), func(t *testing.T) {
			f := newFixture(t, time.Hour)
			f.sender.results = []error{sendErr}
			f.sender.during = func(out bridge.Outgoing) {
				if _, err := f.q.AdvanceStatus(context.Background(), []string{out.ID}, bridge.StatusDelivered); err != nil {
					t.Error(err)
				}
			}
			res := f.submit(textRequest("hello"))
			m := res.Messages[0]
			if m.Status != bridge.StatusDelivered || m.Attempts != 1 || m.LastError != "" || !allSent(res) {
				t.Errorf("result %+v", res)
			}
			got := f.waitStatus(m.ID, bridge.StatusDelivered)
			if got.Attempts != 1 || got.RetryCount != 0 || got.LastError != "" {
				t.Errorf("logged %+v", got)
			}
			if n, _ := f.q.Depth(context.Background()); n != 0 {
				t.Error("the delivered message is still due")
			}
			if ok, failed := f.daily(); ok != 1 || failed != 0 {
				t.Errorf("rollup %d sent, %d failed", ok, failed)
			}
			// The receipt says it was sent: the webhooks hear Sent, then Delivered.
			if ev := f.events.events(); !slices.Equal(ev, []string{m.WhatsAppID + " Sent", m.WhatsAppID + " Delivered"}) {
				t.Errorf("events %v", ev)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "sent"
	}
	return err.Error()
}

// Submit refuses what it cannot store or send, before storing anything.
func TestSubmitValidates(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		req  Request
		code string
	}{
		{Request{Items: []Item{{Type: bridge.TypeText, Text: "x"}}}, "invalid_number"},
		{Request{Recipient: alice}, "missing_type"},
		{Request{Recipient: alice, Items: []Item{{Type: bridge.TypeImage}}}, "missing_file"},
		{Request{Recipient: alice, Items: []Item{{Type: "sticker", Text: "x"}}}, "unknown_type"},
		{Request{Recipient: alice, Items: []Item{{Type: bridge.TypeVideo}}}, "missing_file"},
		{Request{Recipient: alice, Items: []Item{{Type: bridge.TypeLocation}}}, "missing_location"},
		{Request{Recipient: alice, Items: []Item{{Type: bridge.TypeContact}}}, "missing_vcard"},
		{Request{Recipient: alice, Items: []Item{{Type: bridge.TypeReaction}}}, "missing_target"},
	}
	for _, c := range cases {
		_, err := f.q.Submit(context.Background(), c.req)
		wantError(t, err, bridge.KindInvalid, c.code)
	}
	if n := f.count(`SELECT count(*) FROM messages`); n != 0 {
		t.Errorf("%d messages stored", n)
	}
}

// allSent reports a result whose every message was sent on its immediate
// attempt (what POST /send answers with 200).
func allSent(res Result) bool {
	for _, m := range res.Messages {
		if !m.Status.Sent() {
			return false
		}
	}
	return true
}

// wantFailedOnce checks that m's failure was counted once in the daily
// rollup and reported once as an event.
func (f *fixture) wantFailedOnce(m bridge.Message) {
	f.t.Helper()
	if ok, failed := f.daily(); ok != 0 || failed != 1 {
		f.t.Errorf("rollup %d sent, %d failed", ok, failed)
	}
	if ev := f.events.events(); len(ev) != 1 || ev[0] != m.WhatsAppID+" Failed" {
		f.t.Errorf("events %v", ev)
	}
}

// A request accepted while no session is linked wakes the worker only when
// its retry is due before the worker would look anyway: waking it for
// every request of a burst made it read the due messages once per request.
func TestNoSessionWakesTheWorkerOnlyForAnEarlierRetry(t *testing.T) {
	for _, c := range []struct {
		name        string
		sleepsUntil time.Duration // from now; 0: the worker is awake
		retry       time.Duration
		wake        bool
	}{
		{"worker awake", 0, time.Minute, true},
		{"retry before the worker looks", time.Minute, time.Second, true},
		{"retry after the worker looks", time.Second, time.Minute, false},
		// Its timer fired and it is about to read the table: after this
		// commit, so it sees the message without a wake.
		{"the worker's time has passed", -time.Second, time.Minute, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.retry)
			f.sender.setReady(false)
			if c.sleepsUntil != 0 {
				f.q.wake.SleepingUntil(time.Now().Add(c.sleepsUntil))
			}
			f.submit(textRequest("hello"))
			if woken := f.q.wake.Pending(); woken != c.wake {
				t.Errorf("worker woken: %v, want %v", woken, c.wake)
			}
		})
	}
}

// A message accepted while unlinked behind an earlier Queued message of
// its chat cannot go before that one ends, whose end wakes the worker: it
// does not wake the worker even when its retry is due before the worker
// looks. Waking it for each of a burst to one chat made it walk the chat's
// whole backlog once per request (issue 47). A message to another chat
// heads that chat and wakes it as before.
func TestABurstToOneChatWakesTheWorkerOnce(t *testing.T) {
	f := newFixture(t, time.Second)
	f.sender.setReady(false)
	f.q.wake.SleepingUntil(time.Now().Add(-time.Second)) // about to read the table
	f.submit(textRequest("first"))
	f.q.wake.SleepingUntil(time.Now().Add(time.Minute))
	f.submit(textRequest("second"))
	if f.q.wake.Pending() {
		t.Fatal("the worker was woken for a message behind an earlier one of its chat")
	}
	f.submit(Request{Recipient: bridge.PhoneRecipient("4915187654321"), Items: []Item{{Type: bridge.TypeText, Text: "other chat"}}})
	if !f.q.wake.Pending() {
		t.Fatal("the worker was not woken for the head of another chat, due before it looks")
	}
}

// The worker publishes when it looks next while it sleeps, and that an
// accepted message's retry is seen in time: a burst accepted while it
// sleeps is retried on schedule, not at maxIdle.
func TestRetriesOfABurstWithoutSessionAreOnTime(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond, time.Hour)
	f.sender.setReady(false)
	f.run()
	var ids []string
	for i := range 20 {
		req := textRequest("hello")
		req.Recipient = bridge.PhoneRecipient(fmt.Sprintf("49151000000%02d", i)) // 20 chats: 20 heads
		ids = append(ids, f.submit(req).Messages[0].ID)
	}
	if !testutil.Wait(5*time.Second, func() bool { return f.q.wake.Sleeping() }) {
		t.Fatal("the worker never slept")
	}
	for _, id := range ids {
		var m bridge.Message
		if !testutil.Wait(5*time.Second, func() bool {
			var err error
			m, err = f.q.Get(context.Background(), id)
			return err == nil && m.Attempts == 2
		}) {
			t.Fatalf("message %s: %d attempts after 5 s, want its retry", id, m.Attempts)
		}
	}
}
