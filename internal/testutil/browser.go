package testutil

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package puts the browser.
const ChromiumPath = "/usr/bin/chromium"

// Browser starts headless Chromium and returns a context for one tab, open
// already, ended after timeout or at cleanup. Under -short it skips; a
// missing Chromium skips too, except under CI, where it fails the test.
func Browser(tb testing.TB, timeout time.Duration) context.Context {
	tb.Helper()
	SkipIfShort(tb, "starts Chromium")
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is missing: install Debian's chromium package: %v", ChromiumPath, err)
		}
		tb.Skipf("%s is missing; apt-get install chromium to run the browser tests", ChromiumPath)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(ChromiumPath),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // a container's root has no user namespaces to sandbox with
		chromedp.Flag("disable-gpu", true),
		// Without these Chromium calls home at start, which this network
		// refuses, many times over.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
	)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	tb.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // open the tab
		tb.Fatalf("start Chromium: %v", err)
	}
	return ctx
}
