package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/logging"
)

// logBytes is what the log files in dir hold.
func logBytes(t *testing.T, dir string) (total int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	return total
}

// Refusals a caller causes (429 beyond CHECK_RATE, a client ignoring
// Retry-After) are no errors of the bridge: 20,000 of them leave the log
// files, at the default level, as they were. Before, each wrote an error
// line: 5.5 MB in 5.4 s.
func TestRefusalsAreNotLoggedAsErrors(t *testing.T) {
	dir := t.TempDir()
	log, files, err := logging.New(logging.Options{Dir: dir, Level: logging.LevelInfo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = files.Close() })
	limited := &bridge.Error{Kind: bridge.KindRateLimited, Code: bridge.CodeCheckRateLimited, Message: "later", Err: bridge.RetryAfter(1500 * time.Millisecond)}
	srv := newTestServer(t, testDeps{Messages: &fakeMessages{}, Contacts: fakeContacts{err: limited}, Log: log})
	client := &http.Client{}
	const calls = 20000
	for range calls {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/contacts/4915100000002", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", testAPIKey)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a refused check: %d", resp.StatusCode)
		}
	}
	written := logBytes(t, dir)
	t.Logf("%d refused calls wrote %d bytes of log files", calls, written)
	if written > 0 {
		matches, _ := filepath.Glob(filepath.Join(dir, "*"))
		t.Errorf("%d refusals a caller caused wrote %d bytes to %v", calls, written, matches)
	}
}
