package openapi_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// consoleProblems collects what the page reports as going wrong: console
// errors, uncaught exceptions and the browser's own error entries (a
// Content-Security-Policy violation, a failed load).
type consoleProblems struct {
	mu   sync.Mutex
	list []string
}

func (c *consoleProblems) listen(ev any) {
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

func (c *consoleProblems) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.list...)
}

// TestDocsInBrowser renders /docs/ in headless Chromium under its
// Content-Security-Policy: the API's title and an operation show, and the
// page reports no console error, exception, or blocked load.
func TestDocsInBrowser(t *testing.T) {
	srv := server(t)
	ctx := testutil.Browser(t, 2*time.Minute)
	var problems consoleProblems
	if err := chromedp.Listen(ctx, problems.listen); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/docs/")); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Poll[string](
		`(() => { const h = document.querySelector("#docs h1.title"); return h && h.textContent; })()`,
		chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("the page shows no title: %v; problems: %v", err, problems.snapshot())
	}
	if !strings.Contains(title, "msgbridge bridge API") {
		t.Errorf("title %q", title)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`document.body.innerText.includes("/api/admin/state") && document.body.innerText.includes("session.status")`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Errorf("the page does not show the operations and webhooks: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // late errors (fonts, images) arrive after rendering
	if path := os.Getenv("DOCS_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(path, png, 0o600)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	for _, p := range problems.snapshot() {
		t.Error(p)
	}
}
