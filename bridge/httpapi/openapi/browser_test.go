package openapi_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// TestDocsInBrowser renders /docs/ in headless Chromium under its
// Content-Security-Policy: the API's title and an operation show, and the
// page reports no console error, exception, or blocked load.
func TestDocsInBrowser(t *testing.T) {
	srv := server(t)
	ctx := testutil.Browser(t, 2*time.Minute)
	var problems testutil.ConsoleProblems
	if err := chromedp.Listen(ctx, problems.Listen); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/docs/")); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Poll[string](
		`(() => { const h = document.querySelector("#docs h1.title"); return h && h.textContent; })()`,
		chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("the page shows no title: %v; problems: %v", err, problems.Snapshot())
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
	for _, p := range problems.Snapshot() {
		t.Error(p)
	}
}
