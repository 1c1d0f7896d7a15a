package process

import (
	"bytes"
	"context"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// testTOTPSecret is RFC 6238's test key, base32 as TOTP_SECRET takes it.
var testTOTPSecret = base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("12345678901234567890"))

// totpAt is the code an authenticator app shows offset steps from now.
func totpAt(tb testing.TB, offset int) string {
	tb.Helper()
	code, err := totp.GenerateCodeCustom(testTOTPSecret, time.Now().Add(time.Duration(offset)*30*time.Second),
		totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		tb.Fatal(err)
	}
	return code
}

// wrongCode is a six-digit code valid at none of the accepted steps.
func wrongCode(tb testing.TB) string {
	for _, c := range []string{"000000", "999999", "123123"} {
		if c != totpAt(tb, -1) && c != totpAt(tb, 0) && c != totpAt(tb, 1) {
			return c
		}
	}
	tb.Fatal("no wrong code") // three distinct candidates, three valid codes: unreachable
	return ""
}

// phoneWidth and phoneHeight are a common phone's CSS viewport.
const phoneWidth, phoneHeight = 390, 844

// browser starts headless Chromium with a phone's viewport.
func browser(tb testing.TB) context.Context {
	tb.Helper()
	ctx := testutil.Browser(tb, 4*time.Minute)
	do(tb, ctx, "phone viewport", chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile))
	return ctx
}

// do runs browser steps, failing the test on an error.
func do(tb testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a script in the page and returns its value.
func eval[T any](tb testing.TB, ctx context.Context, expr string, opts ...chromedp.EvaluateOption) T {
	tb.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		tb.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS polls expr in the page until it is true.
func waitJS(tb testing.TB, ctx context.Context, what, expr string, limit time.Duration) {
	tb.Helper()
	if !testutil.Wait(limit, func() bool { return eval[bool](tb, ctx, expr) }) {
		state, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.ID("state")))
		msg, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.ID("message")))
		tb.Fatalf("waiting for %s; the page says %q and %q", what, state, msg)
	}
}

// pageState is the expression of the state the page shows.
const pageState = `document.getElementById("state").dataset.state`

// signInBrowser opens the dashboard of an unlinked bridge and signs in with
// the admin token.
func signInBrowser(tb testing.TB, ctx context.Context, base string) {
	tb.Helper()
	signInShowing(tb, ctx, base, "pairing-h")
}

// signInShowing signs in and waits until the element of id is visible.
func signInShowing(tb testing.TB, ctx context.Context, base, id string) {
	tb.Helper()
	do(tb, ctx, "sign in",
		chromedp.Navigate(base+"/dashboard"),
		chromedp.SendKeys(chromedp.ID("token"), testAdminToken),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID(id)))
	waitJS(tb, ctx, "the first state event", pageState+` !== undefined`, 10*time.Second)
}

// showQR asks for the QR code with a code (empty: no code field) and
// waits until the page shows the image.
func showQR(tb testing.TB, ctx context.Context, code string) {
	tb.Helper()
	if code != "" {
		do(tb, ctx, "enter the code for the QR", chromedp.SendKeys(chromedp.ID("qr-code"), code))
	}
	// A click, not Submit: form.submit() skips the page's submit handler.
	do(tb, ctx, "show the QR code", chromedp.Click(chromedp.CSS("#qr-form button")))
	waitJS(tb, ctx, "the QR image", `Object.values(window.qrTimes).some(x => x.shown)`, 40*time.Second)
}

// qrShown is the src of the QR image the page shows.
const qrShown = `document.getElementById("qr").getAttribute("src")`

// waitRotation waits until the page shows a QR image other than prev, and
// returns its src.
func waitRotation(tb testing.TB, ctx context.Context, prev string) string {
	tb.Helper()
	waitJS(tb, ctx, "the rotated QR image", fmt.Sprintf(
		`(() => { const s = %s; const x = window.qrTimes[s]; return s !== %q && !!x && !!x.shown; })()`, qrShown, prev),
		90*time.Second)
	return eval[string](tb, ctx, qrShown)
}

// qrTiming is, for the shown QR image, ms from the bridge receiving the
// code to its event reaching the page and to the image being drawn.
func qrTiming(tb testing.TB, ctx context.Context) (event, shown float64) {
	tb.Helper()
	v := eval[[]float64](tb, ctx, `(() => { const x = window.qrTimes[`+qrShown+`]; return [x.event - x.since, x.shown - x.since]; })()`)
	return v[0], v[1]
}

// decodeShownQR decodes the QR image the page shows, from its pixels drawn
// on a canvas: the picture a phone's camera would see.
func decodeShownQR(tb testing.TB, ctx context.Context) string {
	tb.Helper()
	dataURL := eval[string](tb, ctx, `(() => {
		const img = document.getElementById("qr");
		const c = document.createElement("canvas");
		c.width = img.naturalWidth; c.height = img.naturalHeight;
		c.getContext("2d").drawImage(img, 0, 0);
		return c.toDataURL("image/png");
	})()`)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(dataURL, "data:image/png;base64,"))
	if err != nil {
		tb.Fatal(err)
	}
	return decodeQRPNG(tb, raw)
}

// decodeQRPNG reads the text of the QR code in a PNG.
func decodeQRPNG(tb testing.TB, raw []byte) string {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("the QR image is not a PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		tb.Fatal(err)
	}
	// The image is a generated code, upright with its quiet zone: read it as
	// such first. The finder-pattern search alone missed one code in a CI
	// run (its random content made a false pattern), so it only comes
	// second, trying harder.
	hints := []map[gozxing.DecodeHintType]any{
		{gozxing.DecodeHintType_PURE_BARCODE: true},
		{gozxing.DecodeHintType_TRY_HARDER: true},
	}
	var errs []error
	for _, h := range hints {
		res, err := qrcode.NewQRCodeReader().Decode(bmp, h)
		if err == nil {
			return res.GetText()
		}
		errs = append(errs, err)
	}
	tb.Fatalf("the QR image does not decode: %v", errors.Join(errs...))
	return ""
}

// bridgeQR is the bridge's current QR string, by the admin API.
func bridgeQR(tb testing.TB, base string) string {
	tb.Helper()
	return wasimtest.BridgeQR(tb, base, testAdminToken)
}

// screenshot saves the page as name: into $DASHBOARD_SCREENSHOTS when set
// (make screenshots, for the README), else into the test's temp dir.
func screenshot(tb testing.TB, ctx context.Context, name string) {
	tb.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("DASHBOARD_SCREENSHOTS")
	if dir == "" {
		dir = tb.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), buf, 0o644); err != nil { //nolint:gosec // a picture for the README
		tb.Fatal(err)
	}
}

// postFromPage submits a form body with fetch from the page (so with its
// cookie and origin) and returns the status.
func postFromPage(tb testing.TB, ctx context.Context, path, body string) int {
	tb.Helper()
	return eval[int](tb, ctx, fmt.Sprintf(
		`fetch(%q, {method: "POST", body: new URLSearchParams(%q)}).then(r => r.status)`, path, body), chromedp.EvalAwaitPromise)
}
