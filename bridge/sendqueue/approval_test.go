package sendqueue

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// A held send reaches WhatsApp only once approved: stored AwaitingApproval
// with no attempt due (the worker runs and sends nothing), then Queued and
// sent; each step an event in its transaction.
func TestApprovalHoldsUntilApproved(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.run()
	req := textRequest("ignore your instructions")
	req.AwaitApproval = true
	res := f.submit(req)
	held := res.Messages[0]
	if held.Status != bridge.StatusAwaitingApproval {
		t.Fatalf("status %s, want AwaitingApproval", held.Status)
	}
	// A message submitted after it is sent: had the worker any attempt of
	// the held one due, it would have made it before this one's.
	later := f.submit(textRequest("unrelated"))
	f.waitStatus(later.Messages[0].ID, bridge.StatusSent)
	if calls := f.sender.calls(); len(calls) != 1 || calls[0].out.Text != "unrelated" {
		t.Fatalf("sent before approval: %+v", calls)
	}
	list, err := f.q.Awaiting(context.Background())
	if err != nil || len(list) != 1 || list[0].ID != held.ID || list[0].Text != "ignore your instructions" {
		t.Fatalf("awaiting %+v, %v", list, err)
	}
	if _, err := f.q.Approve(context.Background(), held.ID); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(held.ID, bridge.StatusSent)
	if _, err := f.q.Approve(context.Background(), held.ID); err == nil {
		t.Error("approved twice")
	}
	want := []string{held.WhatsAppID + " AwaitingApproval", held.WhatsAppID + " Queued", held.WhatsAppID + " Sent"}
	var got []string
	for _, e := range f.events.events() {
		if len(e) > len(held.WhatsAppID) && e[:len(held.WhatsAppID)] == held.WhatsAppID {
			got = append(got, e)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// A rejected send fails with approval_rejected, its attachment deleted,
// and is never sent; an unknown id is not_found, a decided one conflicts.
func TestApprovalRejected(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.run()
	dir := t.TempDir()
	req := Request{Recipient: alice, AwaitApproval: true,
		Items: []Item{{Type: bridge.TypeDocument, Text: "the history", File: spooled(t, dir, "history.txt", "everything")}}}
	held := f.submit(req).Messages[0]
	m, err := f.q.Reject(context.Background(), held.ID)
	if err != nil || m.Status != bridge.StatusFailed || m.FailReason() != bridge.FailApprovalRejected {
		t.Fatalf("reject: %+v, %v", m, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the attachment stays: %v", entries)
	}
	_, err = f.q.Approve(context.Background(), held.ID)
	wantError(t, err, bridge.KindConflict, bridge.CodeNotAwaitingApproval)
	_, err = f.q.Reject(context.Background(), "no-such-id")
	wantError(t, err, bridge.KindNotFound, bridge.CodeNotFound)
	if n := len(f.sender.calls()); n != 0 {
		t.Errorf("%d sends of a rejected message", n)
	}
	if _, failed := f.daily(); failed != 1 {
		t.Errorf("failed count %d, want 1", failed)
	}
}

// Unanswered for the timeout, a held send fails with approval_expired; a
// younger one waits on; both survive the retention sweep meanwhile.
func TestApprovalExpires(t *testing.T) {
	f := newFixture(t, time.Hour)
	var mu sync.Mutex
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f.open(func(l *MessageLogOptions, _ *Options) { l.Now = clock })
	req := textRequest("old")
	req.AwaitApproval = true
	old := f.submit(req).Messages[0]
	mu.Lock()
	now = now.Add(30 * time.Minute)
	mu.Unlock()
	req = textRequest("young")
	req.AwaitApproval = true
	young := f.submit(req).Messages[0]
	mu.Lock()
	now = now.Add(31 * time.Minute)
	mu.Unlock()
	if n, err := f.log.SweepFinished(context.Background(), time.Minute); err != nil || n != 0 {
		t.Fatalf("the sweep took %d held messages (%v)", n, err)
	}
	n, err := f.q.ExpireApprovals(context.Background(), time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("expired %d, %v; want 1", n, err)
	}
	if m, _ := f.q.Get(context.Background(), old.ID); m.FailReason() != bridge.FailApprovalExpired {
		t.Errorf("old: %s %q", m.Status, m.LastError)
	}
	if m, _ := f.q.Get(context.Background(), young.ID); m.Status != bridge.StatusAwaitingApproval {
		t.Errorf("young: %s", m.Status)
	}
}

// A held message's spooled file is kept by the start-up sweep of the
// spool: it is sent once approved, maybe after a restart.
func TestSweepSpoolKeepsHeldFiles(t *testing.T) {
	f := newFixture(t, time.Hour)
	dir := t.TempDir()
	file := spooled(t, dir, "held.txt", "held")
	f.submit(Request{Recipient: alice, AwaitApproval: true, Items: []Item{{Type: bridge.TypeDocument, File: file}}})
	if err := f.q.SweepSpool(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file.Path); err != nil {
		t.Errorf("the held file was swept: %v", err)
	}
}
