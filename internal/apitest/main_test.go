package apitest_test

import (
	"os"
	"testing"

	"github.com/msgbridge/msgbridge/internal/apitest"
)

// TestMain keeps this package's own tests, which talk to fake bridges, out
// of the project's coverage records.
func TestMain(m *testing.M) {
	_ = os.Unsetenv(apitest.CoverageDirEnv)
	os.Exit(m.Run())
}
