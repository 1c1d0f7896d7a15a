package process

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Calls and blocks where a person looks for them, on a bridge without any
// subscription (the event log keeps them all the same): the Calls page
// lists a missed call by the caller's name; the conversation shows it
// among the messages, and its header blocks the contact (the phone's list
// has it) and shows it blocked; the phone's unblock shows in the thread and
// clears the header.
func TestDashboardShowsCallsAndBlocks(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	ana := sim.Contact(alice, "Ana")
	phone := sim.Phone(testAccount)
	ctx := browser(t)
	var problems testutil.ConsoleProblems
	if err := chromedp.Listen(ctx, problems.Listen); err != nil {
		t.Fatal(err)
	}
	signInShowing(t, ctx, "http://"+p.addr, "overview-h")
	waitJS(t, ctx, "connected", pageState+` === "connected"`, 20*time.Second)

	contactSends(t, ana, accountJID, &waE2E.Message{Conversation: proto.String("I tried to call you")})
	call := ana.Call(phone, false)
	ana.HangUp(phone, call)

	do(t, ctx, "open the calls", chromedp.Navigate("http://"+p.addr+"/dashboard/#calls"))
	waitJS(t, ctx, "the missed call by name", fmt.Sprintf(`(() => { const r = document.querySelector('#calls tr[data-kind="call"][data-chat=%q]');
		return !!r && r.textContent.includes("Ana") && r.textContent.includes("📞 Missed voice call"); })()`, alice), 30*time.Second)

	do(t, ctx, "open the conversation", chromedp.Navigate("http://"+p.addr+"/dashboard/#chat/"+alice))
	waitJS(t, ctx, "the call in the thread", `[...document.querySelectorAll("#thread .bubble.event")].some((b) => b.textContent.includes("📞 Missed voice call"))`, 30*time.Second)
	waitJS(t, ctx, "the block button", `!document.getElementById("thread-block").hidden && document.getElementById("thread-block").textContent === "Block" && document.getElementById("thread-blocked").hidden`, 10*time.Second)
	do(t, ctx, "block", chromedp.Click(chromedp.ID("thread-block")))
	waitJS(t, ctx, "the confirmation", `document.getElementById("confirm").open`, 5*time.Second)
	do(t, ctx, "confirm", chromedp.Click(chromedp.ID("confirm-ok")))
	waitJS(t, ctx, "blocked in the header", `!document.getElementById("thread-blocked").hidden && document.getElementById("thread-block").textContent === "Unblock"`, 30*time.Second)
	if !phone.Blocks(ana) {
		t.Error("the phone's block list lacks Ana")
	}
	waitJS(t, ctx, "the block in the thread", `[...document.querySelectorAll("#thread .bubble.event")].some((b) => b.textContent.includes("🚫 Blocked by the bridge"))`, 30*time.Second)
	screenshot(t, ctx, "conversation-blocked.png")

	phone.SetBlocked(ana, false)
	waitJS(t, ctx, "the phone's unblock", `document.getElementById("thread-blocked").hidden && document.getElementById("thread-block").textContent === "Block" &&
		[...document.querySelectorAll("#thread .bubble.event")].some((b) => b.textContent.includes("✅ Unblocked on the phone"))`, 30*time.Second)
	if ps := problems.Snapshot(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %v", ps)
	}
}
