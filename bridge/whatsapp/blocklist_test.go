package whatsapp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// blockLog is the BlockEvents port, recording what it heard.
type blockLog struct {
	mu      sync.Mutex
	changes []bridge.BlockChange
}

func (l *blockLog) BlockChanged(_ context.Context, c bridge.BlockChange) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changes = append(l.changes, c)
	return nil
}

func (l *blockLog) all() []bridge.BlockChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.changes)
}

// linkedWithBlocks links a bridge that reports block changes, and returns
// a contact book over it within budget (burst at once, then one a minute).
func linkedWithBlocks(t *testing.T, burst int) (*wasim.Simulator, *running, *blockLog, *ContactBook) {
	t.Helper()
	sim := wasim.Start(t)
	blocks := &blockLog{}
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.Blocks = blocks })
	linkByQR(t, sim, r)
	// The list read at login reports nothing: a block the phone makes
	// before it is read is part of the list as first read.
	waitFor(t, "the list read at login", r.blocklistLoaded)
	batcher := sqlite.NewBatcher(r.db)
	t.Cleanup(batcher.Close)
	book := NewContactBook(r.Session, r.db, batcher, bridge.SendRate{N: 1, Per: time.Minute}, burst)
	return sim, r, blocks, book
}

// The API blocks a contact on WhatsApp (the account's phone sees it on its
// list) and reports it once; a send to the contact, by number or LID, is
// then refused; unblocking reports it and lifts the refusal.
func TestBlockAndUnblockThroughTheAPI(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, blocks, book := linkedWithBlocks(t, 10)
	ctx := waitCtx(t)
	alice := sim.Contact("4915100000002", "Alice")
	phone := sim.Phone(account)
	byNumber := bridge.PhoneRecipient(alice.Number())
	byLID := bridge.Recipient{Kind: bridge.RecipientLID, ID: alice.LID().User}

	if err := book.SetBlocked(ctx, byNumber, true); err != nil {
		t.Fatal(err)
	}
	if !phone.Blocks(alice) {
		t.Fatal("the phone's list lacks alice")
	}
	if !r.Blocked(byNumber) || !r.Blocked(byLID) {
		t.Errorf("blocked by number %v, by LID %v", r.Blocked(byNumber), r.Blocked(byLID))
	}
	want := bridge.BlockChange{Contact: byNumber, ContactLID: byLID, ContactPhone: byNumber, Blocked: true, By: bridge.BlockedByAPI}
	if got := blocks.all(); len(got) != 1 || !sameChange(got[0], want) {
		t.Fatalf("changes %+v, want one %+v", got, want)
	}
	list, err := book.Blocklist(ctx)
	if err != nil || len(list) != 1 || list[0].Contact != byNumber {
		t.Errorf("block list %+v %v", list, err)
	}

	if err := book.SetBlocked(ctx, byLID, false); err != nil {
		t.Fatal(err)
	}
	if phone.Blocks(alice) || r.Blocked(byNumber) {
		t.Error("still blocked after the unblock")
	}
	want.Blocked = false
	if got := blocks.all(); len(got) != 2 || !sameChange(got[1], want) {
		t.Errorf("changes %+v, want the unblock %+v", got, want)
	}
}

// The phone blocking and unblocking a contact reaches the bridge by
// WhatsApp's blocklist notification: reported as the phone's, and sends
// are refused meanwhile.
func TestPhoneBlocksAreReported(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, blocks, _ := linkedWithBlocks(t, 10)
	bob := sim.Contact("4915100000003", "Bob")
	byLID := bridge.Recipient{Kind: bridge.RecipientLID, ID: bob.LID().User}

	sim.Phone(account).SetBlocked(bob, true)
	waitFor(t, "the phone's block", func() bool { return len(blocks.all()) == 1 })
	if c := blocks.all()[0]; !c.Blocked || c.By != bridge.BlockedByPhone || c.ContactLID != byLID {
		t.Errorf("change %+v", c)
	}
	if !r.Blocked(byLID) {
		t.Error("a send to bob would not be refused")
	}
	sim.Phone(account).SetBlocked(bob, false)
	waitFor(t, "the phone's unblock", func() bool { return len(blocks.all()) == 2 })
	if c := blocks.all()[1]; c.Blocked || c.By != bridge.BlockedByPhone {
		t.Errorf("change %+v", c)
	}
	if r.Blocked(byLID) {
		t.Error("still refused after the unblock")
	}
}

// The list is read at login: what the phone blocked before the bridge
// linked is refused at once, and not reported as a change.
func TestBlocklistReadAtLogin(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim := wasim.Start(t)
	carol := sim.Contact("4915100000004", "Carol")
	sim.Phone(account).SetBlocked(carol, true)
	blocks := &blockLog{}
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.Blocks = blocks })
	linkByQR(t, sim, r)
	byLID := bridge.Recipient{Kind: bridge.RecipientLID, ID: carol.LID().User}
	waitFor(t, "the list read at login", func() bool { return r.Blocked(byLID) })
	if got := blocks.all(); len(got) != 0 {
		t.Errorf("changes %+v, want none", got)
	}
}

// Blocks reach WhatsApp within CHECK_RATE: beyond the burst the API is
// refused with a retry hint, and nothing reaches WhatsApp.
func TestBlocksWithinTheBudget(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, _, _, book := linkedWithBlocks(t, 1)
	ctx := waitCtx(t)
	alice, bob := sim.Contact("4915100000002", "Alice"), sim.Contact("4915100000003", "Bob")
	if err := book.SetBlocked(ctx, bridge.PhoneRecipient(alice.Number()), true); err != nil {
		t.Fatal(err)
	}
	err := book.SetBlocked(ctx, bridge.PhoneRecipient(bob.Number()), true)
	if _, ok := bridge.RetryAfterOf(err); !ok || !isCode(err, bridge.CodeCheckRateLimited) {
		t.Fatalf("second block: %v, want check_rate_limited with a retry hint", err)
	}
	if sim.Phone(account).Blocks(bob) {
		t.Error("the refused block reached WhatsApp")
	}
}

func sameChange(got, want bridge.BlockChange) bool {
	got.At = time.Time{}
	return got == want
}

func isCode(err error, code string) bool {
	e, ok := errors.AsType[*bridge.Error](err)
	return ok && e.Code == code
}
