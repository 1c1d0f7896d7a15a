package openapi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/internal/apitest"
)

// TestOpenAPICoverage fails listing the documented operations and webhook
// events that no test exercised, from the records every test process wrote
// to $APITEST_COVERAGE_DIR. Run it after all the other packages, with
// APITEST_COVERAGE_CHECK=1 (see internal/apitest's package comment); it
// writes the operation-by-test table to coverage.md in that directory.
func TestOpenAPICoverage(t *testing.T) {
	dir := os.Getenv(apitest.CoverageDirEnv)
	if dir == "" || os.Getenv(apitest.CoverageCheckEnv) == "" {
		t.Skipf("set %s and %s after a run of every package with %s (make test does)",
			apitest.CoverageDirEnv, apitest.CoverageCheckEnv, apitest.CoverageDirEnv)
	}
	hits, err := apitest.ReadCoverage(dir)
	if err != nil {
		t.Fatal(err)
	}
	report, err := apitest.Report(hits)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "coverage.md"), []byte(report), 0o600); err != nil {
		t.Error(err)
	}
	t.Log("\n" + report)
	missing, err := apitest.Uncovered(hits)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		var b strings.Builder
		for _, op := range missing {
			b.WriteString("\n\t" + op.String())
		}
		t.Errorf("%d documented operations no test exercised (through apitest.Transport or apitest.ValidateWebhook):%s", len(missing), b.String())
	}
}
