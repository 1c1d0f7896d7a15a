package process

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// The whole dashboard in headless Chromium at phone width, against the
// bridge process and the simulated network: sign-in; the QR image decodes
// to the bridge's QR string and follows its rotation; a phone scans it and
// the page shows connected and the groups without a reload; a wrong code
// and a form without the CSRF token are refused; logout with a TOTP code;
// linking again with a pairing code from the page.
func TestDashboardInBrowser(t *testing.T) {
	ctx := browser(t)
	sim := wasim.Start(t)
	phone := sim.Phone(testAccount)
	sim.CreateGroup("Night shift", sim.Contact("4915100000099", "Dana"), phone)
	p := startBridge(t, simBridgeBin, append(simEnv(sim, t.TempDir()), "TOTP_SECRET="+testTOTPSecret))
	base := "http://" + p.addr

	// A wrong token is refused; the right one signs in.
	do(t, ctx, "sign in with a wrong token",
		chromedp.Navigate(base+"/dashboard"),
		chromedp.SendKeys(chromedp.ID("token"), "not-the-token"),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("signin-error")))
	signInBrowser(t, ctx, base)
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true; undefined`))
	if cookies := eval[string](t, ctx, `document.cookie`); cookies != "" {
		t.Errorf("the session cookie is visible to scripts: %q", cookies)
	}
	waitJS(t, ctx, "the state unpaired", pageState+` === "unpaired"`, 10*time.Second)
	if role := eval[string](t, ctx, `document.getElementById("state").getAttribute("role")`); role != "status" {
		t.Errorf("the state has role %q; screen readers announce only a status", role)
	}

	// Showing the QR code needs the one-time code; the image is the
	// bridge's QR string and follows whatsmeow's rotation (60 s for the
	// first code).
	showQR(t, ctx, totpAt(t, 0))
	if got, want := decodeShownQR(t, ctx), bridgeQR(t, base); got != want {
		t.Fatalf("the page's QR decodes to %q, the bridge's is %q", got, want)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > phoneWidth {
		t.Errorf("the page is %d px wide on a %d px phone", w, phoneWidth)
	}
	screenshot(t, ctx, "pairing.png")
	waitRotation(t, ctx, eval[string](t, ctx, qrShown))
	// A rotation is pushed, not picked up by the stream's 5 s refresh; the
	// figure itself is BenchmarkDashboardQRRotation's.
	if event, _ := qrTiming(t, ctx); event > 2500 {
		t.Errorf("the rotated QR reached the page after %.0f ms: not pushed", event)
	}
	qr := decodeShownQR(t, ctx)
	if want := bridgeQR(t, base); qr != want {
		t.Fatalf("after rotation the page's QR decodes to %q, the bridge's is %q", qr, want)
	}

	// The phone scans what the page shows.
	wasimtest.Scan(t, phone, qr)
	waitJS(t, ctx, "connected on the page", pageState+` === "connected"`, 30*time.Second)
	waitJS(t, ctx, "the group on the page", `document.getElementById("groups").textContent.includes("Night shift — 2 members")`, 10*time.Second)
	if !eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the page reloaded to show connected")
	}
	if account := eval[string](t, ctx, `document.getElementById("account").textContent`); !strings.Contains(account, testAccount) {
		t.Errorf("account shown: %q", account)
	}
	screenshot(t, ctx, "connected.png")

	// A wrong code is refused; a forged form without the CSRF token is
	// refused even with a valid code and the session cookie.
	do(t, ctx, "log out with a wrong code",
		chromedp.SendKeys(chromedp.ID("logout-code"), wrongCode(t)),
		chromedp.Click(chromedp.CSS("#logout-form button")))
	waitJS(t, ctx, "the refusal", `document.getElementById("message").textContent === "Wrong or used code."`, 10*time.Second)
	if status := postFromPage(t, ctx, "/dashboard/logout", "code="+totpAt(t, 0)); status != http.StatusForbidden {
		t.Errorf("logout without the CSRF token: %d, want 403", status)
	}
	if st := waitAdminState(t, p, "a state", func(adminState) bool { return true }); !connected(st) {
		t.Fatalf("refused logouts unlinked the account: %+v", st)
	}

	// The QR used a code over 60 s ago, two steps back: the current code
	// is new. A used or older step is never accepted again.
	do(t, ctx, "log out",
		chromedp.SendKeys(chromedp.ID("logout-code"), totpAt(t, 0)),
		chromedp.Click(chromedp.CSS("#logout-form button")))
	waitJS(t, ctx, "logged out on the page", pageState+` === "unpaired"`, 20*time.Second)
	waitAdminState(t, p, "logged out", func(s adminState) bool { return !s.Connected && s.State == "unpaired" })

	// Link again with a pairing code the page shows; it needs a code too,
	// the next step's (within the one step of tolerance).
	do(t, ctx, "ask for a pairing code",
		chromedp.SendKeys(chromedp.ID("number"), "+"+testAccount),
		chromedp.SendKeys(chromedp.ID("pairing-otp"), totpAt(t, 1)),
		chromedp.Click(chromedp.CSS("#pairing-code-form button")))
	waitJS(t, ctx, "the pairing code", `document.getElementById("pairing-code").textContent.length === 9`, 20*time.Second)
	code := strings.ReplaceAll(eval[string](t, ctx, `document.getElementById("pairing-code").textContent`), "-", "")
	if _, err := phone.EnterCode(context.Background(), code); err != nil {
		t.Fatalf("the phone refused the page's pairing code %q: %v", code, err)
	}
	waitJS(t, ctx, "connected again", pageState+` === "connected"`, 30*time.Second)

	// The sign-ins, the refusals and the logout are in the audit log.
	var entries []struct{ Action, Outcome string }
	request(t, http.MethodGet, base+"/api/admin/audit", testAdminToken, "", "", &entries)
	seen := map[string]int{}
	for _, e := range entries {
		seen[e.Action+"/"+e.Outcome]++
	}
	for _, want := range []string{"dashboard.sign_in/rejected", "dashboard.sign_in/success", "session.pairing_qr/success",
		"session.logout/rejected", "session.logout/success", "session.pairing_code/success"} {
		if seen[want] == 0 {
			t.Errorf("audit log lacks %s: %v", want, seen)
		}
	}
}
