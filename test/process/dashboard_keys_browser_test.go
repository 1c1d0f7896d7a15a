package process

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The Keys page in headless Chromium at phone width: a key created there
// shows its secret once, and the secret works; a send it holds for
// approval is listed and approved with a click, and reaches the contact's
// phone; the key is revoked after a confirmation and then refused. No
// console error, exception or CSP violation.
func TestDashboardKeysPageInBrowser(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	contact := sim.Contact(alice, "Alice")
	ctx := browser(t)
	var problems testutil.ConsoleProblems
	if err := chromedp.Listen(ctx, problems.Listen); err != nil {
		t.Fatal(err)
	}
	signInShowing(t, ctx, "http://"+p.addr, "overview-h")
	do(t, ctx, "open the keys page", chromedp.Click(chromedp.CSS(`nav a[data-page="keys"]`)))
	waitJS(t, ctx, "the empty lists", `document.getElementById("keys").textContent.includes("No keys")`, 10*time.Second)
	do(t, ctx, "fill the new key",
		chromedp.SendKeys(chromedp.ID("key-name"), "assistant"),
		chromedp.Click(chromedp.CSS(`#key-form input[value="send"]`)),
		chromedp.SendKeys(chromedp.ID("key-chats"), alice),
		chromedp.Click(chromedp.ID("key-approval")),
		chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)))
	waitJS(t, ctx, "the secret shown", `document.getElementById("key-secret").textContent.includes("mbk_")`, 10*time.Second)
	shown := eval[string](t, ctx, `document.getElementById("key-secret").textContent`)
	_, rest, _ := strings.Cut(shown, ": ")
	secret, _, _ := strings.Cut(rest, " ")
	waitJS(t, ctx, "the key listed", `document.querySelector('#keys li[data-key="assistant"]') !== null`, 10*time.Second)

	code, raw := keyCall(t, p, secret, http.MethodPost, "/api/messages", `{"to":"`+alice+`","type":"text","text":"held for a person"}`)
	if code != http.StatusAccepted || !strings.Contains(raw, "AwaitingApproval") {
		t.Fatalf("the new key's send: %d %s", code, raw)
	}
	var held struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(raw), &held); err != nil {
		t.Fatal(err)
	}
	row := `#approvals li[data-id="` + held.Messages[0].ID + `"]`
	waitJS(t, ctx, "the held send listed", `document.querySelector('`+row+`') !== null`, 15*time.Second)
	if n := len(contact.Received()); n != 0 {
		t.Fatalf("the phone has %d messages before approval", n)
	}
	do(t, ctx, "approve", chromedp.Click(chromedp.CSS(row+` button`)))
	receivedTimes(t, contact, 1, 30*time.Second)
	waitJS(t, ctx, "the approvals empty", `document.getElementById("approvals").textContent.includes("Nothing awaits")`, 15*time.Second)

	do(t, ctx, "revoke", chromedp.Click(chromedp.CSS(`#keys li[data-key="assistant"] button`)))
	waitJS(t, ctx, "the confirmation", `document.getElementById("confirm").open`, 5*time.Second)
	do(t, ctx, "confirm", chromedp.Click(chromedp.ID("confirm-ok")))
	waitJS(t, ctx, "the key gone", `document.querySelector('#keys li[data-key="assistant"]') === null`, 10*time.Second)
	if code, _ := keyCall(t, p, secret, http.MethodGet, "/api/messages?chat="+alice, ""); code != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d", code)
	}
	if ps := problems.Snapshot(); len(ps) > 0 {
		t.Errorf("the page reported problems: %v", ps)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > phoneWidth {
		t.Errorf("the page is %d px wide on a %d px phone", w, phoneWidth)
	}
}
