package testutil

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
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

// ConsoleProblems collects what the page reports as going wrong: console
// errors, uncaught exceptions and the browser's own error entries (a
// Content-Security-Policy violation, a failed load).
type ConsoleProblems struct {
	mu   sync.Mutex
	list []string
}

// Listen is the listener to give chromedp.Listen.
func (c *ConsoleProblems) Listen(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		p = "exception: " + ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			p += " " + ev.ExceptionDetails.Exception.Description
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			p = fmt.Sprintf("%s %s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
		}
	}
	if p != "" {
		c.mu.Lock()
		c.list = append(c.list, p)
		c.mu.Unlock()
	}
}

// Snapshot is what went wrong so far.
func (c *ConsoleProblems) Snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.list...)
}
