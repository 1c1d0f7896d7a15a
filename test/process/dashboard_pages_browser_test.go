package process

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The data pages in headless Chromium at phone width, against the bridge
// process with a linked account and a simulated contact: a message sent
// appears on the messages page and moves to Read live when the contact's
// receipt comes; a send to a number not on WhatsApp shows its reason there
// and under the overview's failures today; a photo the contact sends shows
// inline in the conversation, fetched with the session's cookie; the admin
// page purges a log file and deletes an audit record, each after its
// confirmation (and a cancelled one deletes nothing); a dead letter is
// redelivered, the receivers show their health and a replay to one of them
// works; the messages page filters by chat; the overview shows WhatsApp's
// restriction of sending. The pages report no
// console error, exception or Content-Security-Policy violation. It also
// measures the time from a receipt to its row's update (see README).
func TestDashboardPagesInBrowser(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := bridgeWithDeadLetters(t, sim, hooks)
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsNone) // the test sends the receipts
	ctx := browser(t)
	var problems testutil.ConsoleProblems
	if err := chromedp.Listen(ctx, problems.Listen); err != nil {
		t.Fatal(err)
	}
	base := "http://" + p.addr
	signInShowing(t, ctx, base, "overview-h")
	waitJS(t, ctx, "connected", pageState+` === "connected"`, 20*time.Second)

	// A message sent appears, then moves to Read without a reload.
	do(t, ctx, "open the messages", chromedp.Click(chromedp.CSS(`nav a[data-page="messages"]`)))
	sentMsg := decode[sendResponse](t, mustSend(t, p, alice, "hello from the test")).Messages[0]
	row := fmt.Sprintf(`document.querySelector('#log tr[data-id=%q]')`, sentMsg.ID)
	waitJS(t, ctx, "the sent row", row+` !== null && `+row+`.dataset.status === "Sent"`, 20*time.Second)
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true; undefined`))
	if err := contact.SendReceipt(sentMsg.WhatsAppID, types.ReceiptTypeRead); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the row at Read", row+`.dataset.status === "Read"`, 20*time.Second)
	if !eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the page reloaded to show Read")
	}

	// A failure shows its reason, on the messages page and the overview.
	code, raw := sendText(t, p, "4915199999999", "anyone?")
	failed := decode[sendResponse](t, raw).Messages[0]
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("send to a number not on WhatsApp: %d %s", code, raw)
	}
	failedRow := fmt.Sprintf(`document.querySelector('#log tr[data-id=%q]')`, failed.ID)
	waitJS(t, ctx, "the failed row with its reason",
		failedRow+` !== null && `+failedRow+`.textContent.includes("not_on_whatsapp")`, 20*time.Second)
	screenshot(t, ctx, "messages.png")
	do(t, ctx, "filter by status", chromedp.SetValue(chromedp.ID("filter-status"), "Read"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("filters").dispatchEvent(new Event("input")); undefined`))
	waitJS(t, ctx, "only Read rows", failedRow+` === null && `+row+` !== null`, 10*time.Second)
	chatFilter(t, ctx, row, failedRow)
	do(t, ctx, "open the overview", chromedp.Click(chromedp.CSS(`nav a[data-page="overview"]`)))
	waitJS(t, ctx, "the failure today", `document.getElementById("failures").textContent.includes("not_on_whatsapp")`, 10*time.Second)
	waitJS(t, ctx, "the chart", `document.querySelectorAll("#chart rect").length === 28`, 10*time.Second)
	if q := eval[string](t, ctx, `document.getElementById("queue-depth").textContent`); !strings.Contains(q, "wait") {
		t.Errorf("the queue depth shows %q", q)
	}
	screenshot(t, ctx, "overview.png")

	// A photo the contact sends shows inline in the conversation.
	sendPhoto(t, contact)
	others := otherMedia(t, contact)
	waitMediaStored(t, p, 1+len(others)) // a page that asks before shows a failed load in the console
	do(t, ctx, "open the conversation", chromedp.Navigate(base+"/dashboard/#chat/"+alice))
	waitJS(t, ctx, "the photo drawn", `(() => { const i = document.querySelector("#thread img.media"); return !!i && i.complete && i.naturalWidth === 160; })()`, 30*time.Second)
	if src := eval[string](t, ctx, `document.querySelector("#thread img.media").getAttribute("src")`); !strings.HasPrefix(src, "/dashboard/api/media/") {
		t.Errorf("the photo's URL is %q", src)
	}
	mediaShown(t, ctx, others)
	conversationChanges(t, ctx, contact)
	screenshot(t, ctx, "conversation.png")

	receiversPage(t, ctx, p, hooks)

	adminPage(t, ctx, p)
	receiptFigure(t, ctx, p, contact)

	// The overview's banner while WhatsApp restricts sending, gone when lifted.
	do(t, ctx, "open the overview", chromedp.Click(chromedp.CSS(`nav a[data-page="overview"]`)))
	sim.Phone(testAccount).ReachoutLock(time.Now().Add(time.Hour))
	waitJS(t, ctx, "the restriction banner", `!document.getElementById("banner-restricted").hidden &&
		document.getElementById("banner-restricted").textContent.includes("restricted sending until")`, 20*time.Second)
	sim.Phone(testAccount).LiftReachoutLock()
	waitJS(t, ctx, "the banner gone", `document.getElementById("banner-restricted").hidden`, 20*time.Second)
	if ps := problems.Snapshot(); len(ps) > 0 {
		t.Errorf("the pages reported problems: %v", ps)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > phoneWidth {
		t.Errorf("the page is %d px wide on a %d px phone", w, phoneWidth)
	}
}

// bridgeWithDeadLetters is a linked bridge whose webhook outbox holds dead
// letters: the events of the link, which the receiver refused, made dead
// while the bridge was stopped (a day of refusals does not fit in a test),
// and a receiver that takes them now.
func bridgeWithDeadLetters(t *testing.T, sim *wasim.Simulator, hooks *hookReceiver) *bridgeProcess {
	t.Helper()
	dataDir := t.TempDir()
	hooks.failing.Store(true)
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	p.kill()
	db := testutil.OpenBridgeDBAt(t, filepath.Join(dataDir, "bridge.db"))
	res, err := db.Exec(`UPDATE webhook_outbox SET status = 'dead', attempts = 9, last_error = 'receiver answered 500' WHERE status = 'pending'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no webhook event waited for the receiver")
	}
	_ = db.Close() // before the bridge opens it
	hooks.failing.Store(false)
	p = startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), hooks.env()...))
	waitAdminState(t, p, "connected", connected)
	return p
}

// chatFilter filters the messages page by chat, which the API does: the
// failed send's number, typed as a person types it, shows its row only; a
// chat the API refuses marks the field and says why.
func chatFilter(t *testing.T, ctx context.Context, row, failedRow string) {
	t.Helper()
	filter := func(chat string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("filter-status").value = "";
			document.getElementById("filter-chat").value = %q;
			document.getElementById("filters").dispatchEvent(new Event("input")); undefined`, chat))
	}
	do(t, ctx, "filter by chat", filter("+49 151 9999-9999"))
	waitJS(t, ctx, "the chat's rows only", failedRow+` !== null && `+row+` === null`, 10*time.Second)
	do(t, ctx, "filter by a chat that is none", filter("alice"))
	waitJS(t, ctx, "the chat refused", `document.getElementById("filter-chat").getAttribute("aria-invalid") === "true" &&
		document.getElementById("log-empty") !== null && document.getElementById("log-empty").textContent.includes("chat must be")`, 10*time.Second)
	do(t, ctx, "no chat filter", filter(""))
	waitJS(t, ctx, "every row", failedRow+` !== null && `+row+` !== null`, 10*time.Second)
}

// receiversPage shows each receiver with its health: the webhook, healthy
// with its dead letters, and a subscription whose receiver answers 500,
// failing with its error. A dead letter is redelivered (the receiver gets
// it, and the page lists it no more), and a replay to the webhook alone
// delivers the received messages to it again.
func receiversPage(t *testing.T, ctx context.Context, p *bridgeProcess, hooks *hookReceiver) {
	t.Helper()
	var dead []struct {
		ID        int64  `json:"id"`
		WebhookID string `json:"webhook_id"`
	}
	request(t, http.MethodGet, "http://"+p.addr+"/api/admin/webhooks/failed", testAdminToken, "", "", &dead)
	if len(dead) == 0 {
		t.Fatal("no dead letters")
	}
	broken := newHookReceiver(t)
	broken.failing.Store(true)
	body := `{"id":"crm","target":"` + broken.srv.URL + `/hook","events":["message.status"],"secret":"` + testWebhookSecret + `"}`
	if code, raw := request(t, http.MethodPost, "http://"+p.addr+"/api/admin/subscriptions", testAdminToken, "application/json", body, nil); code != http.StatusCreated {
		t.Fatalf("create a subscription: %d %s", code, raw)
	}
	mustSend(t, p, alice, "for the receivers")
	// By keyboard: the link focused, then Enter.
	do(t, ctx, "open the receivers", chromedp.Focus(chromedp.CSS(`nav a[data-page="receivers"]`)), chromedp.KeyEvent(kb.Enter))
	receiverCard := func(id string) string {
		return fmt.Sprintf(`document.querySelector('#receivers li[data-subscription=%q]')`, id)
	}
	waitJS(t, ctx, "the webhook's health", fmt.Sprintf(`%s !== null && %[1]s.dataset.state === "healthy" &&
		%[1]s.textContent.includes("%d dead letter")`, receiverCard("default"), len(dead)), 10*time.Second)
	waitJS(t, ctx, "the failing subscription", fmt.Sprintf(`%s !== null && %[1]s.dataset.state === "failing" &&
		%[1]s.querySelector(".reason") !== null && %[1]s.querySelector(".reason").textContent.includes("500")`, receiverCard("crm")), 30*time.Second)
	screenshot(t, ctx, "receivers.png")
	row := fmt.Sprintf(`#receivers li[data-subscription="default"] li.dead[data-id="%d"]`, dead[0].ID)
	do(t, ctx, "redeliver", chromedp.Click(chromedp.CSS(row+" button")))
	hooks.wait("the redelivered "+dead[0].WebhookID, func(e hookEvent) bool { return e.ID == dead[0].WebhookID })
	waitJS(t, ctx, "the dead letter gone", fmt.Sprintf(`document.querySelector('%s') === null`, row), 10*time.Second)
	replayTo(t, ctx, hooks, "default")
}

// replayTo replays the last hour to subscription id from the page: a
// message received before comes to hooks again, under its webhook-id.
func replayTo(t *testing.T, ctx context.Context, hooks *hookReceiver, id string) {
	t.Helper()
	upsert := hooks.wait("a received message", func(e hookEvent) bool { return e.str("event") == "message.upsert" })
	deliveries := func() int {
		return len(slices.DeleteFunc(hooks.all(), func(e hookEvent) bool { return e.ID != upsert.ID }))
	}
	before := deliveries()
	do(t, ctx, "replay the last hour to "+id,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("replay-since").value = new Date(Date.now() - 3600e3).toISOString().slice(0, 16); undefined`),
		chromedp.SetValue(chromedp.ID("replay-to"), id), chromedp.Click(chromedp.CSS(`#replay-form button`)))
	waitJS(t, ctx, "the replay started", `/Replaying [1-9][0-9]* events to `+id+`/.test(document.getElementById("message").textContent)`, 10*time.Second)
	testutil.Eventually(t, 30*time.Second, func() bool { return deliveries() > before }, "the replayed message did not come again")
}

// mustSend sends a text through the API and returns the answer's body.
func mustSend(t *testing.T, p *bridgeProcess, number, text string) string {
	t.Helper()
	code, raw := sendText(t, p, number, text)
	if code != http.StatusOK {
		t.Fatalf("send: %d %s", code, raw)
	}
	return raw
}

// sendPhoto has the contact send a 160x120 PNG to the account.
func sendPhoto(t *testing.T, contact *wasim.User) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 160, 120))
	for x := range 160 {
		for y := range 120 {
			img.Set(x, y, color.RGBA{R: uint8(x + 60), G: uint8(y + 100), B: 160, A: 255}) //nolint:gosec // small values
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	sendAttachment(t, contact, wasim.Attachment{Kind: "image", Data: buf.Bytes(), MimeType: "image/png", Caption: "a photo"})
}

func sendAttachment(t *testing.T, contact *wasim.User, a wasim.Attachment) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := contact.SendMedia(ctx, accountJID, a); err != nil {
		t.Fatal(err)
	}
}

// otherMedia has the contact send a voice note (a second of WAV
// silence), a video and a document; it returns them by kind.
func otherMedia(t *testing.T, contact *wasim.User) map[string]wasim.Attachment {
	t.Helper()
	wav := binary.LittleEndian.AppendUint32([]byte("RIFF"), 36+8000)
	wav = append(wav, "WAVEfmt "...)
	for _, v := range []uint32{16, 1 | 1<<16, 8000, 8000, 1 | 8<<16} { // PCM, mono, 8 kHz, 8 bits
		wav = binary.LittleEndian.AppendUint32(wav, v)
	}
	wav = binary.LittleEndian.AppendUint32(append(wav, "data"...), 8000)
	wav = append(wav, bytes.Repeat([]byte{128}, 8000)...)
	media := map[string]wasim.Attachment{
		"audio":    {Kind: "audio", PTT: true, Data: wav, MimeType: "audio/wav"},
		"video":    {Kind: "video", Data: []byte("not really a video"), MimeType: "video/mp4", Caption: "a video"},
		"document": {Kind: "document", Data: []byte("%PDF-1.4 the minutes"), MimeType: "application/pdf", FileName: "minutes.pdf"},
	}
	for _, kind := range []string{"audio", "video", "document"} {
		sendAttachment(t, contact, media[kind])
	}
	return media
}

// mediaShown checks the open conversation: the voice note and the video
// playable through the dashboard's media path, the document a download of
// its name whose body, fetched with the session's cookie, is the file.
func mediaShown(t *testing.T, ctx context.Context, media map[string]wasim.Attachment) {
	t.Helper()
	waitJS(t, ctx, "the voice note, the video and the document", `(() => {
		const audio = document.querySelector("#thread audio[controls]"), video = document.querySelector("#thread video[controls]"),
			doc = document.querySelector("#thread a.download");
		return !!audio && !!video && !!doc && [audio, video, doc].every((e) => (e.getAttribute("src") || e.getAttribute("href")).startsWith("/dashboard/api/media/"));
	})()`, 30*time.Second)
	waitJS(t, ctx, "the voice note playable", `document.querySelector("#thread audio").readyState >= 1 && document.querySelector("#thread audio").duration === 1`, 10*time.Second)
	if d := eval[string](t, ctx, `document.querySelector("#thread a.download").getAttribute("download") + "|" + document.querySelector("#thread a.download").textContent`); d != "minutes.pdf|Download minutes.pdf" {
		t.Errorf("the document's link: %q", d)
	}
	body := eval[string](t, ctx, `fetch(document.querySelector("#thread a.download").href).then((r) => r.text())`, chromedp.EvalAwaitPromise)
	if body != string(media["document"].Data) {
		t.Errorf("the document downloads as %q", body)
	}
}

// conversationChanges has the contact write, quote, react, edit and
// revoke; the open conversation shows each on the message it names.
func conversationChanges(t *testing.T, ctx context.Context, contact *wasim.User) {
	t.Helper()
	send := func(m *waE2E.Message) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		id, err := contact.Send(sctx, accountJID, m)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	keyOf := func(id string) *waCommon.MessageKey {
		return &waCommon.MessageKey{RemoteJID: proto.String(accountJID.String()), FromMe: proto.Bool(false), ID: proto.String(id)}
	}
	first := send(&waE2E.Message{Conversation: proto.String("first")})
	send(&waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("a reply"),
		ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String(first), Participant: proto.String(contact.JID().String())}}})
	gone := send(&waE2E.Message{Conversation: proto.String("a mistake")})
	send(&waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Key: keyOf(first), Text: proto.String("👍")}})
	send(&waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{Key: keyOf(first), Type: waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(),
		EditedMessage: &waE2E.Message{Conversation: proto.String("first, edited")}}})
	send(&waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{Key: keyOf(gone), Type: waE2E.ProtocolMessage_REVOKE.Enum()}})
	bubble := func(id string) string { return fmt.Sprintf(`document.querySelector('#thread li[data-id=%q]')`, id) }
	waitJS(t, ctx, "the edit, the reaction and the revoke applied", fmt.Sprintf(`(() => {
		const first = %s, gone = %s;
		return !!first && !!gone && first.querySelector(".text").textContent === "first, edited (edited)" &&
			first.querySelector(".reaction") !== null && first.querySelector(".reaction").textContent === "👍" &&
			gone.querySelector(".text").textContent === "This message was deleted.";
	})()`, bubble(first), bubble(gone)), 30*time.Second)
	if q := eval[string](t, ctx, `[...document.querySelectorAll("#thread blockquote")].map(b => b.textContent).join("|")`); q != "↩ first, edited (edited)" && q != "↩ first" {
		t.Errorf("the reply quotes %q", q)
	}
}

// waitMediaStored waits until the latest n received attachments are
// downloaded and served.
func waitMediaStored(t *testing.T, p *bridgeProcess, n int) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, func() bool {
		_, raw := getMedia(t, p, fmt.Sprintf("/api/messages?direction=in&limit=%d", n))
		var page struct {
			Messages []struct {
				Payload struct {
					Media *struct{ URL string } `json:"media"`
				} `json:"payload"`
			} `json:"messages"`
		}
		if json.Unmarshal(raw, &page) != nil || len(page.Messages) < n {
			return false
		}
		for _, m := range page.Messages {
			if m.Payload.Media == nil {
				return false
			}
			if answer, _ := getMedia(t, p, m.Payload.Media.URL); answer.StatusCode != http.StatusOK {
				return false
			}
		}
		return true
	}, "the attachments are not served")
}

// adminPage purges today's info log and deletes an audit record from the
// admin page, each through its confirmation; a cancelled deletion deletes
// nothing.
func adminPage(t *testing.T, ctx context.Context, p *bridgeProcess) {
	t.Helper()
	do(t, ctx, "open the admin page", chromedp.Click(chromedp.CSS(`nav a[data-page="admin"]`)))
	// The replay's record comes last: once it shows, the list stays put
	// under the pointer.
	waitJS(t, ctx, "the audit list with the replay", `document.getElementById("audit").textContent.includes("webhooks.replay")`, 10*time.Second)
	screenshot(t, ctx, "admin.png")
	id := eval[string](t, ctx, `document.querySelector("#audit li[data-id]").dataset.id`)
	record := fmt.Sprintf(`document.querySelector('#audit li[data-id=%q]')`, id)
	do(t, ctx, "delete, then cancel", chromedp.Click(chromedp.CSS(`#audit li[data-id="`+id+`"] button`)))
	waitJS(t, ctx, "the confirmation (to cancel)", `document.getElementById("confirm").open`, 5*time.Second)
	do(t, ctx, "cancel", chromedp.Click(chromedp.ID("confirm-cancel")))
	waitJS(t, ctx, "the dialog closed", `!document.getElementById("confirm").open`, 5*time.Second)
	if !auditHas(t, p, id) {
		t.Fatal("a cancelled deletion deleted the record")
	}
	// The dialog's close event, which re-enables the button, may come after
	// the click that Chrome's input priority hurries.
	waitJS(t, ctx, "the button enabled again", `!document.querySelector('#audit li[data-id="`+id+`"] button').disabled`, 5*time.Second)
	do(t, ctx, "delete, then confirm", chromedp.Click(chromedp.CSS(`#audit li[data-id="`+id+`"] button`)))
	waitJS(t, ctx, "the confirmation (to delete)", `document.getElementById("confirm").open`, 5*time.Second)
	do(t, ctx, "confirm", chromedp.Click(chromedp.ID("confirm-ok")))
	waitJS(t, ctx, "the record gone", record+` === null`, 10*time.Second)
	if auditHas(t, p, id) {
		t.Error("the audit record is still listed by the API")
	}

	do(t, ctx, "purge today's info log", chromedp.Click(chromedp.CSS(`#purge-form button`)))
	waitJS(t, ctx, "the confirmation (to purge)", `document.getElementById("confirm").open`, 5*time.Second)
	do(t, ctx, "confirm", chromedp.Click(chromedp.ID("confirm-ok")))
	waitJS(t, ctx, "the purge done", `document.getElementById("message").textContent.includes("is deleted")`, 10*time.Second)
	waitJS(t, ctx, "the purge in the audit list", `document.getElementById("audit").textContent.includes("logs.purge · success")`, 10*time.Second)
}

// auditHas reports whether the API lists audit record id this week.
func auditHas(t *testing.T, p *bridgeProcess, id string) bool {
	t.Helper()
	var records []struct{ ID string }
	request(t, http.MethodGet, "http://"+p.addr+"/api/admin/audit", testAdminToken, "", "", &records)
	return slices.ContainsFunc(records, func(r struct{ ID string }) bool { return r.ID == id })
}

// receiptFigure measures, for read receipts one at a time, the time from
// the contact sending the receipt to the row showing Read on the messages
// page, next to the time to the traffic event's own arrival in the page
// (the stream alone, without the page's read and drawing).
func receiptFigure(t *testing.T, ctx context.Context, p *bridgeProcess, contact *wasim.User) {
	t.Helper()
	do(t, ctx, "open the messages", chromedp.Click(chromedp.CSS(`nav a[data-page="messages"]`)),
		chromedp.SetValue(chromedp.ID("filter-status"), ""),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("filters").dispatchEvent(new Event("input")); undefined`))
	const n = 20
	var rows, events []float64
	for i := range n {
		m := decode[sendResponse](t, mustSend(t, p, alice, fmt.Sprintf("figure %d", i))).Messages[0]
		row := fmt.Sprintf(`document.querySelector('#log tr[data-id=%q]')`, m.ID)
		waitJS(t, ctx, "the sent row", row+` !== null && `+row+`.dataset.status === "Sent"`, 20*time.Second)
		start := float64(time.Now().UnixMilli())
		if err := contact.SendReceipt(m.WhatsAppID, types.ReceiptTypeRead); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "the row at Read", row+`.dataset.status === "Read"`, 20*time.Second)
		v := eval[[]float64](t, ctx, fmt.Sprintf(`[window.rowTimes[%q], window.trafficTimes.find(x => x >= %f)]`, m.ID+":Read", start))
		rows, events = append(rows, v[0]-start), append(events, v[1]-start)
	}
	t.Logf("receipt to the row at Read: p50 %.0f ms, p99 %.0f ms; to the traffic event in the page: p50 %.0f ms, p99 %.0f ms (%d receipts)",
		quantile(rows, .5), quantile(rows, .99), quantile(events, .5), quantile(events, .99), n)
}

// quantile is the q-quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// The overview's full-disk banner: shown while DATA_DIR's volume is below
// DISK_RESERVE, gone when space is back, without a reload and with no
// console error meanwhile.
func TestDashboardDiskFullBanner(t *testing.T) {
	dataDir := tmpfsDataDir(t, "32m")
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, dataDir, "DISK_RESERVE=8MiB")
	ctx := browser(t)
	var problems testutil.ConsoleProblems
	if err := chromedp.Listen(ctx, problems.Listen); err != nil {
		t.Fatal(err)
	}
	signInShowing(t, ctx, "http://"+p.addr, "overview-h")
	waitJS(t, ctx, "connected", pageState+` === "connected"`, 20*time.Second)
	if !eval[bool](t, ctx, `document.getElementById("banner-disk").hidden`) {
		t.Fatal("the full-disk banner shows on a disk with room")
	}
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true; undefined`))
	fill := fillDisk(t, dataDir, 4<<20)
	waitJS(t, ctx, "the full-disk banner", `!document.getElementById("banner-disk").hidden`, 30*time.Second)
	screenshot(t, ctx, "disk-full.png")
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the banner gone", `document.getElementById("banner-disk").hidden && `+pageState+` === "connected"`, 60*time.Second)
	if !eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the page reloaded")
	}
	if ps := problems.Snapshot(); len(ps) > 0 {
		t.Errorf("the page reported problems: %v", ps)
	}
}
