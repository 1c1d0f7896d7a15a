package httpkit

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

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
