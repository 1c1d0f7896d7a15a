package admin

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The admin API's own tests: the router's tests in bridge/httpapi cover
// its endpoints through HTTP.

var saturday = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) // 2026-W47

// openAuditLog opens a real audit log in a temporary directory.
func openAuditLog(t *testing.T, now func() time.Time) *audit.Trail {
	t.Helper()
	l, err := audit.Open(filepath.Join(t.TempDir(), "audit"), testutil.TestKey(), now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// errorCode is the code of an error-shaped body; it fails the test for any
// other body.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var b httpkit.ErrorBody
	if err := json.Unmarshal([]byte(body), &b); err != nil || b.Error.Code == "" || b.Error.Message == "" {
		t.Fatalf("not the error shape: %s", body)
	}
	return b.Error.Code
}
