package whatsapp

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Reactions, edits and revokes reach the contact decrypted, naming the
// message they act on: the account's own, or (a reaction) one it received.
func TestActionsReachTheContact(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	_, r, alice := linked(t)
	ctx := waitCtx(t)
	chat := bridge.PhoneRecipient(alice.Number())
	send := func(out bridge.Outgoing) *wasim.Message {
		t.Helper()
		out.ID, out.Recipient = r.NewMessageID(), chat
		if err := r.Send(ctx, out); err != nil {
			t.Fatalf("send %s: %v", out.Type, err)
		}
		m, err := alice.WaitMessage(ctx, out.ID)
		if err != nil || m.Err != nil {
			t.Fatalf("%s never arrived: %v %v", out.Type, err, m)
		}
		return m
	}
	text := send(bridge.Outgoing{Type: bridge.TypeText, Text: "hello"})

	m := send(bridge.Outgoing{Type: bridge.TypeReaction, TargetID: text.ID, Emoji: "👍"})
	if target, emoji, fromMe, ok := m.Reaction(); !ok || target != text.ID || emoji != "👍" || !fromMe {
		t.Errorf("reaction: %s %q fromMe=%v ok=%v", target, emoji, fromMe, ok)
	}
	m = send(bridge.Outgoing{Type: bridge.TypeEdit, TargetID: text.ID, Text: "hello, corrected"})
	if target, newText, ok := m.Edit(); !ok || target != text.ID || newText != "hello, corrected" {
		t.Errorf("edit: %s %q ok=%v", target, newText, ok)
	}
	m = send(bridge.Outgoing{Type: bridge.TypeRevoke, TargetID: text.ID})
	if target, ok := m.Revoke(); !ok || target != text.ID {
		t.Errorf("revoke: %s ok=%v", target, ok)
	}

	// A reaction to what Alice sent names her message, not one of ours.
	received, err := alice.SendText(ctx, types.NewJID(account, types.DefaultUserServer), "a question")
	if err != nil {
		t.Fatal(err)
	}
	m = send(bridge.Outgoing{Type: bridge.TypeReaction, TargetID: received, TargetSender: chat, Emoji: "❤️"})
	if target, emoji, fromMe, ok := m.Reaction(); !ok || target != received || emoji != "❤️" || fromMe {
		t.Errorf("reaction to a received message: %s %q fromMe=%v ok=%v", target, emoji, fromMe, ok)
	}
}

// A read mark reaches the sender of the message as a read receipt, and chat
// presences reach the simulator as WhatsApp's chatstate nodes.
func TestReadMarksAndPresenceReachTheSimulator(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, alice := linked(t)
	r.pace = newChatPace(50*time.Millisecond, time.Now) // three states in a row, each in its turn
	ctx := waitCtx(t)
	chat := bridge.PhoneRecipient(alice.Number())
	id, err := alice.SendText(ctx, types.NewJID(account, types.DefaultUserServer), "read me")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.MarkRead(ctx, chat, bridge.Recipient{}, id); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.WaitTick(ctx, id, types.ReceiptTypeRead); err != nil {
		t.Fatalf("no read receipt for %s: %v (ticks %+v)", id, err, alice.Ticks())
	}

	for _, tc := range []struct {
		p            bridge.ChatPresence
		state, media string
	}{
		{bridge.PresenceComposing, "composing", ""},
		{bridge.PresenceRecording, "composing", "audio"},
		{bridge.PresencePaused, "paused", ""},
	} {
		before := len(sim.ChatStates())
		if err := r.SetPresence(ctx, chat, tc.p); err != nil {
			t.Fatalf("%s: %v", tc.p, err)
		}
		cs, err := sim.WaitChatState(ctx, func(cs wasim.ChatState) bool { return len(sim.ChatStates()) > before })
		if err != nil {
			t.Fatalf("%s never arrived: %v", tc.p, err)
		}
		last := sim.ChatStates()[before]
		if last.Chat.User != alice.Number() || last.State != tc.state || last.Media != tc.media {
			t.Errorf("%s arrived as %+v (%+v)", tc.p, last, cs)
		}
	}
}

// A burst of questions about one number asks WhatsApp once; the answer is
// kept in bridge.db, so a restarted book does not ask again.
func TestContactBookAsksOnceForABurst(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, alice := linked(t)
	ctx := waitCtx(t)
	batcher := sqlite.NewBatcher(r.db)
	t.Cleanup(batcher.Close)
	book := NewContactBook(r.Session, r.db, batcher, unpacedChecks, 1000)
	const stranger = "4915199999999"

	var wg sync.WaitGroup
	answers := make([]bridge.Contact, 50)
	errs := make([]error, 50)
	for i := range answers {
		wg.Go(func() { answers[i], errs[i] = book.Contact(ctx, stranger) })
	}
	wg.Wait()
	for i := range answers {
		if errs[i] != nil || answers[i] != (bridge.Contact{Number: stranger}) {
			t.Fatalf("answer %d: %+v %v", i, answers[i], errs[i])
		}
	}
	if n := sim.ContactQuestions(stranger); n != 1 {
		t.Errorf("the simulator was asked %d times about %s, want 1", n, stranger)
	}

	// WhatsApp answers in LID addressing: the number's LID comes with the
	// answer, before the contact ever wrote.
	c, err := book.Contact(ctx, alice.Number())
	if err != nil || !c.OnWhatsApp || c.JID != alice.JID().String() || c.LID != alice.LID().String() {
		t.Errorf("alice: %+v %v", c, err)
	}
	restarted := NewContactBook(r.Session, r.db, batcher, unpacedChecks, 1000)
	if c, err := restarted.Contact(ctx, stranger); err != nil || c.OnWhatsApp {
		t.Errorf("after a restart: %+v %v", c, err)
	}
	if n := sim.ContactQuestions(stranger); n != 1 {
		t.Errorf("a restarted book asked again: %d questions", n)
	}
}

// BenchmarkContactCheck: number checks per second. "cold" asks WhatsApp
// (the simulator) about a new number each time, "uncached" is whatsmeow's
// IsOnWhatsApp itself (the baseline), "warm-db" answers from bridge.db (a
// restarted bridge), "warm" from memory.
func BenchmarkContactCheck(b *testing.B) {
	_, r, alice := linked(b)
	ctx := context.Background()
	batcher := sqlite.NewBatcher(r.db)
	b.Cleanup(batcher.Close)
	number := func(i int) string { return fmt.Sprintf("4916%09d", i) }
	b.Run("uncached", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := r.lookUp(ctx, []string{number(i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		book := NewContactBook(r.Session, r.db, batcher, unpacedChecks, 1000)
		for i := 0; b.Loop(); i++ {
			if _, err := book.Contact(ctx, number(1_000_000+i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	warm := NewContactBook(r.Session, r.db, batcher, unpacedChecks, 1000)
	if _, err := warm.Contact(ctx, alice.Number()); err != nil {
		b.Fatal(err)
	}
	b.Run("warm-db", func(b *testing.B) {
		for b.Loop() {
			if _, err := NewContactBook(r.Session, r.db, batcher, unpacedChecks, 1000).Contact(ctx, alice.Number()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := warm.Contact(ctx, alice.Number()); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// unpacedChecks is a budget no test of other behaviour reaches.
var unpacedChecks = bridge.SendRate{N: 100000, Per: time.Second}

// Item 2: a flood of checks of distinct numbers reaches WhatsApp within
// the budget (the burst, then one query per interval); the rest are refused
// with a retry hint, and the queue's checks wait for a token and share the
// query that waits for it. FLOOD_NUMBERS sets the flood (2000 for the
// figure); the budget here is 5 at once and 60/m.
func TestContactChecksWithinBudget(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, _ := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	batcher := sqlite.NewBatcher(r.db)
	t.Cleanup(batcher.Close)
	book := NewContactBook(r.Session, r.db, batcher, bridge.SendRate{N: 60, Per: time.Minute}, 5)
	flood, spread := 300, time.Duration(0)
	if n, err := fmt.Sscan(os.Getenv("FLOOD_NUMBERS"), &flood); n != 1 || err != nil {
		flood = 300
	}
	if d, err := time.ParseDuration(os.Getenv("FLOOD_SPREAD")); err == nil {
		spread = d // the figure: the flood spread over a minute
	}
	answered, refused, queries, elapsed := checkFlood(t, ctx, sim, book, "4917", flood, spread)
	t.Logf("%d distinct numbers in %s: %d answered, %d refused with Retry-After, %d queries reached the simulator",
		flood, elapsed.Round(time.Millisecond), answered, refused, queries)
	if limit := 5 + int(elapsed/time.Second) + 1; queries > limit {
		t.Errorf("%d queries reached WhatsApp in %s, the budget allows %d", queries, elapsed, limit)
	}
	if spread > 0 { // the baseline of the figure: the same flood, unpaced
		unpaced := NewContactBook(r.Session, r.db, batcher, unpacedChecks, 1000)
		_, _, queries, elapsed := checkFlood(t, ctx, sim, unpaced, "4919", flood, spread)
		t.Logf("baseline, unpaced: %d queries reached the simulator in %s", queries, elapsed.Round(time.Millisecond))
	}

	// The queue waits for the next token; checks that come meanwhile join
	// its query (a book whose one token the first check takes).
	book = NewContactBook(r.Session, r.db, batcher, bridge.SendRate{N: 60, Per: time.Minute}, 1)
	if _, err := book.Contact(ctx, "4918999999999"); err != nil {
		t.Fatal(err)
	}
	before := sim.ContactQueries()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = book.QueueChecks().Contact(ctx, fmt.Sprintf("4918%09d", i)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("queue check %d: %v", i, err)
		}
	}
	if n := sim.ContactQueries() - before; n < 1 || n > 2 {
		t.Errorf("4 queue checks waiting for the budget took %d queries, want 1 (2 when a token came between them)", n)
	}
}

// checkFlood asks book about n distinct numbers (prefix, then a counter),
// spread evenly over spread: how many were answered, how many refused with
// a retry hint, and how many queries reached the simulator meanwhile.
func checkFlood(t *testing.T, ctx context.Context, sim *wasim.Simulator, book *ContactBook, prefix string, n int, spread time.Duration) (answered, refused, queries int, elapsed time.Duration) {
	t.Helper()
	before, start := sim.ContactQueries(), time.Now()
	for i := range n {
		if spread > 0 {
			time.Sleep(time.Until(start.Add(spread * time.Duration(i) / time.Duration(n)))) //nolint:forbidigo // the flood's own pace
		}
		_, err := book.Contact(ctx, fmt.Sprintf("%s%09d", prefix, i))
		switch wait, ok := bridge.RetryAfterOf(err); {
		case err == nil:
			answered++
		case ok && bridge.ErrorOf(err).Code == "check_rate_limited" && wait > 0:
			refused++
		default:
			t.Fatalf("number %d: %v", i, err)
		}
	}
	return answered, refused, sim.ContactQueries() - before, time.Since(start)
}

// Item 3: floods of chat states and read marks reach WhatsApp paced: 2,000
// "composing" to one chat send one state; 2,000 alternating states send one
// per interval (the last of them at its turn); 2,000 read marks of one
// message send one receipt.
func TestChatFloodsArePaced(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, alice := linked(t)
	const interval = 300 * time.Millisecond
	r.pace = newChatPace(interval, time.Now)
	ctx := waitCtx(t)
	chat := bridge.PhoneRecipient(alice.Number())
	states := func() int { return len(sim.ChatStates()) }

	for range 2000 {
		if err := r.SetPresence(ctx, chat, bridge.PresenceComposing); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sim.WaitChatState(ctx, func(wasim.ChatState) bool { return states() >= 1 }); err != nil {
		t.Fatal(err)
	}
	same := states()

	start, before := time.Now(), states()
	for i := range 2000 {
		p := bridge.PresenceComposing
		if i%2 == 1 {
			p = bridge.PresencePaused
		}
		if err := r.SetPresence(ctx, chat, p); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	// The last one asked for (paused) arrives at its turn.
	if _, err := sim.WaitChatState(ctx, func(cs wasim.ChatState) bool {
		all := sim.ChatStates()
		return len(all) > before && all[len(all)-1].State == "paused"
	}); err != nil {
		t.Fatalf("the last state never arrived: %v", err)
	}
	alternating := states() - before

	id, err := alice.SendText(ctx, types.NewJID(account, types.DefaultUserServer), "read me often")
	if err != nil {
		t.Fatal(err)
	}
	for range 2000 {
		if err := r.MarkRead(ctx, chat, bridge.Recipient{}, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alice.WaitTick(ctx, id, types.ReceiptTypeRead); err != nil {
		t.Fatal(err)
	}
	reads := 0
	for _, tick := range alice.Ticks() {
		if tick.ID == id && tick.Type == types.ReceiptTypeRead {
			reads++
		}
	}
	t.Logf("2000 composing: %d states sent; 2000 alternating in %s: %d sent; 2000 read marks of one message: %d receipts",
		same, elapsed.Round(time.Millisecond), alternating, reads)
	if same != 1 {
		t.Errorf("2000 composing to one chat sent %d states, want 1", same)
	}
	if limit := 2 + int(elapsed/interval); alternating > limit {
		t.Errorf("2000 alternating states sent %d in %s, want at most %d (one per %s)", alternating, elapsed, limit, interval)
	}
	if reads != 1 {
		t.Errorf("2000 read marks sent %d receipts, want 1", reads)
	}
}
