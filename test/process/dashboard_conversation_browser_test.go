package process

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The Conversations page shows what was said, against the bridge process
// and the simulator: the account's own text, its quote of the contact's
// message and its document's name; the chats named by the contact's push
// name ("Ana") and the group's subject ("Ops"); the contact's vote on a
// sent poll and reaction to a sent text on the messages they name, and the
// account's reaction to and edit of messages likewise; at 1280 px the
// messages table and the thread use the width.
func TestDashboardConversationShowsWhatWasSaid(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	ana := sim.Contact(alice, "Ana")
	dana := sim.Contact("4915100000099", "Dana")
	ops := sim.CreateGroup("Ops", dana, sim.Phone(testAccount))
	ctx := browser(t)
	var problems testutil.ConsoleProblems
	if err := chromedp.Listen(ctx, problems.Listen); err != nil {
		t.Fatal(err)
	}
	signInShowing(t, ctx, "http://"+p.addr, "overview-h")
	waitJS(t, ctx, "connected", pageState+` === "connected"`, 20*time.Second)

	hers := contactSends(t, ana, accountJID, &waE2E.Message{Conversation: proto.String("hi, it's Ana")})
	contactSends(t, dana, ops.JID(), &waE2E.Message{Conversation: proto.String("standup at 9")})
	text := sendJSON(t, p, `{"to":"`+alice+`","type":"text","text":"hello Ana","reply_to":"`+hers+`"}`)
	ct, body := multipartBody(t, part{name: "number", value: alice}, part{name: "type[]", value: "document"},
		part{name: "text[]", value: ""}, part{name: "file[]", fileName: "offer.pdf", data: []byte("%PDF-1.4 the offer")})
	code, raw := send(t, p, ct, body)
	if code != http.StatusOK {
		t.Fatalf("send the document: %d %s", code, raw)
	}
	doc := decode[sendResponse](t, raw).Messages[0]
	poll := sendJSON(t, p, `{"to":"`+alice+`","type":"poll","poll":{"question":"Lunch?","options":["Pizza","Soup"],"selectable_count":1}}`)

	// The contact votes on the poll and reacts to the text, by their
	// WhatsApp ids; the account reacts to hers and edits its text.
	voteCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := ana.Vote(voteCtx, receive(t, ana, poll.WhatsAppID), "Soup"); err != nil {
		t.Fatal(err)
	}
	receive(t, ana, text.WhatsAppID)
	contactSends(t, ana, accountJID, &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{
		Key:  &waCommon.MessageKey{RemoteJID: proto.String(accountJID.String()), FromMe: proto.Bool(false), ID: proto.String(text.WhatsAppID)},
		Text: proto.String("👍")}})
	if code, raw := apiJSON(t, p, "POST", "/api/messages/"+hers+"/reaction?chat="+alice, `{"emoji":"❤️"}`, nil); code != http.StatusOK {
		t.Fatalf("react: %d %s", code, raw)
	}
	if code, raw := apiJSON(t, p, "PATCH", "/api/messages/"+text.ID, `{"text":"hello Ana!"}`, nil); code != http.StatusOK {
		t.Fatalf("edit: %d %s", code, raw)
	}

	do(t, ctx, "open the conversation", chromedp.Navigate("http://"+p.addr+"/dashboard/#chat/"+alice))
	bubble := func(id string) string { return fmt.Sprintf(`document.querySelector('#thread li[data-id=%q]')`, id) }
	waitJS(t, ctx, "the sent text with its quote, edit and the contact's reaction", fmt.Sprintf(`(() => { const b = %s;
		return !!b && b.querySelector(".text").textContent === "hello Ana! (edited)" &&
			b.querySelector("blockquote") !== null && b.querySelector("blockquote").textContent.startsWith("↩ hi, it's Ana") &&
			b.querySelector(".reaction") !== null && b.querySelector(".reaction").textContent === "👍"; })()`, bubble(text.ID)), 30*time.Second)
	waitJS(t, ctx, "the document's name", fmt.Sprintf(`(() => { const b = %s;
		return !!b && b.querySelector(".attachment") !== null && b.querySelector(".attachment").textContent === "📎 offer.pdf"; })()`,
		bubble(doc.ID)), 10*time.Second)
	waitJS(t, ctx, "the vote on the poll", fmt.Sprintf(`(() => { const b = %s;
		return !!b && b.querySelector(".text").textContent === "📊 Lunch?" && b.querySelector(".votes").textContent === "Ana voted Soup"; })()`,
		bubble(poll.ID)), 30*time.Second)
	waitJS(t, ctx, "the account's reaction on her message", fmt.Sprintf(`(() => { const b = %s;
		return !!b && b.querySelector(".reaction") !== null && b.querySelector(".reaction").textContent === "❤️"; })()`,
		bubble(hers)), 10*time.Second)
	if n := eval[int](t, ctx, `[...document.querySelectorAll("#thread .bubble")].filter((b) =>
		[...b.children].every((c) => c.matches(".meta, .status") || c.textContent.trim() === "")).length`); n != 0 {
		t.Errorf("%d empty bubbles", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#thread .bubble").length`); n != 4 {
		t.Errorf("%d bubbles, want 4: hers, the text, the document, the poll (the vote and the reactions and the edit are on them)", n)
	}

	// The chats by name.
	waitJS(t, ctx, "the chats named", fmt.Sprintf(`(() => {
		const names = [...document.querySelectorAll("#chats a")].map((a) => a.textContent);
		return names.includes("Ana") && names.includes("Ops") && document.getElementById("thread-h").textContent === "Chat with Ana (+%s)";
	})()`, alice), 30*time.Second)
	if ids := eval[string](t, ctx, `[...document.querySelectorAll("#chats a")].map((a) => a.textContent).join("|")`); strings.Contains(ids, "@g.us") || strings.Contains(ids, alice) {
		t.Errorf("the chats show raw ids: %q", ids)
	}
	screenshot(t, ctx, "conversation-sent.png")

	wideLayout(t, ctx)
	if ps := problems.Snapshot(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %v", ps)
	}
}

// wideLayout checks the pages at a laptop's 1280 px: the messages table
// takes most of the width, and the thread sits beside the chat list.
func wideLayout(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, "laptop viewport", chromedp.EmulateViewport(1280, 800))
	waitJS(t, ctx, "the thread beside the chats", `(() => {
		const c = document.getElementById("chats").getBoundingClientRect(), th = document.getElementById("thread").getBoundingClientRect();
		return th.left > c.right && th.width > 600; })()`, 10*time.Second)
	do(t, ctx, "open the messages", chromedp.Click(chromedp.CSS(`nav a[data-page="messages"]`)))
	waitJS(t, ctx, "the rows", `document.querySelectorAll("#log tr[data-dir]").length > 0`, 10*time.Second)
	if w := eval[float64](t, ctx, `document.querySelector("table.log").getBoundingClientRect().width`); w < 1000 {
		t.Errorf("the messages table is %.0f px wide at 1280 px", w)
	}
	if got := eval[string](t, ctx, `document.querySelector('#log tr[data-dir="out"] td[data-label="Message"]').textContent`); got == "text" || got == "poll" || got == "document" {
		t.Errorf("a sent message's row shows only its type %q", got)
	}
}

// contactSends has u send m to the chat to, and returns its WhatsApp id.
func contactSends(t *testing.T, u *wasim.User, to types.JID, m *waE2E.Message) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := u.Send(ctx, to, m)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// sendJSON sends one message through POST /api/messages.
func sendJSON(t *testing.T, p *bridgeProcess, body string) sentItem {
	t.Helper()
	code, raw := apiJSON(t, p, "POST", "/api/messages", body, nil)
	if code != http.StatusOK {
		t.Fatalf("send %s: %d %s", body, code, raw)
	}
	return decode[sendResponse](t, raw).Messages[0]
}

// The overview of an unlinked bridge leads with linking: "Link a phone"
// is above the session card and the (empty) chart, in the first screen
// of a phone.
func TestDashboardUnlinkedLeadsWithLinking(t *testing.T) {
	sim := wasim.Start(t)
	p := startBridge(t, simBridgeBin, simEnv(sim, t.TempDir()))
	ctx := browser(t)
	signInShowing(t, ctx, "http://"+p.addr, "overview-h")
	waitJS(t, ctx, "the state unpaired", pageState+` === "unpaired"`, 10*time.Second)
	top := func(id string) float64 {
		return eval[float64](t, ctx, `document.getElementById("`+id+`").getBoundingClientRect().top`)
	}
	if eval[bool](t, ctx, `document.getElementById("pairing").hidden`) {
		t.Fatal("Link a phone is hidden on an unlinked bridge")
	}
	if link, chart, status := top("pairing-h"), top("chart"), top("status-h"); link > chart || link > status || link > phoneHeight-100 {
		t.Errorf("Link a phone at %.0f px; the session at %.0f, the chart at %.0f: it must lead, in the first screen", link, status, chart)
	}
}
