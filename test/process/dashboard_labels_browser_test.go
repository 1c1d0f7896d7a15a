package process

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The Conversations page shows a chat's labels where a person looks for
// them, beside the chat's name in the list and under the thread's title,
// in the label's colour, as the phone put them on through app state; and
// the channels the account follows or owns, with their role, followers
// and link.
func TestDashboardShowsLabelsAndChannels(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir(), "GROUP_ACTION_RATE=100/s")
	ctx := browser(t)
	var problems testutil.ConsoleProblems
	if err := chromedp.Listen(ctx, problems.Listen); err != nil {
		t.Fatal(err)
	}
	signInShowing(t, ctx, "http://"+p.addr, "overview-h")
	waitJS(t, ctx, "connected", pageState+` === "connected"`, 20*time.Second)

	ana := sim.Contact(alice, "Ana")
	contactSends(t, ana, accountJID, &waE2E.Message{Conversation: proto.String("hi, it's Ana")})
	phone, wctx := sim.Phone(testAccount), wasimtest.Context(t)
	if err := phone.EditLabel(wctx, "1", "New customer", 3, false); err != nil {
		t.Fatal(err)
	}
	if err := phone.LabelChat(wctx, "1", types.NewJID(alice, types.DefaultUserServer), true); err != nil {
		t.Fatal(err)
	}
	news := sim.CreateChannel(ana, "Ana's news", "")
	news.Follow(phone)

	// The bridge has read both from app state before the page asks.
	testutil.Poll(t, 30*time.Second, func() (string, bool) {
		_, raw := groupCall(t, p, "GET", "/api/labels", "", "", "", nil)
		return raw, strings.Contains(raw, `"chats":["`+alice+`"]`)
	}, "the bridge never listed the label on the chat")
	do(t, ctx, "open the conversation", chromedp.Navigate("http://"+p.addr+"/dashboard/#chat/"+alice))
	waitJS(t, ctx, "the label beside the chat and under its title", fmt.Sprintf(`(() => {
		const inList = document.querySelector('#chats a[data-chat=%q] .label');
		const inThread = document.querySelector('#thread-labels .label');
		return !!inList && inList.textContent === "New customer" && !!inThread && inThread.textContent === "New customer" &&
			getComputedStyle(inThread).backgroundColor !== "rgba(0, 0, 0, 0)"; })()`, alice), 40*time.Second)
	waitJS(t, ctx, "the followed channel", fmt.Sprintf(`(() => {
		const li = document.querySelector('#channels li[data-channel=%q]');
		return !!li && li.querySelector("strong").textContent === "Ana's news" && li.textContent.includes("subscriber") &&
			li.querySelector("a").getAttribute("href") === %q; })()`, news.JID().String(), news.InviteLink()), 40*time.Second)
	if ps := problems.Snapshot(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %v", ps)
	}
}
