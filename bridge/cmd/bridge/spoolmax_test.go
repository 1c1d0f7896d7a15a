package main

import (
	"strings"
	"testing"
)

// Item 6: a SPOOL_MAX_BYTES larger than DATA_DIR's volume is refused (the
// disk would fill before any 507); one that fits, and the default, stand.
func TestSpoolMaxLargerThanTheVolumeIsRefused(t *testing.T) {
	dir := t.TempDir()
	if _, err := spoolMaxFor(1<<50, dir); err == nil || !strings.Contains(err.Error(), "larger than the volume of DATA_DIR") {
		t.Errorf("1 PiB on a test volume: %v", err)
	}
	if got, err := spoolMaxFor(1<<20, dir); err != nil || got != 1<<20 {
		t.Errorf("1 MiB: %d %v", got, err)
	}
	if got, err := spoolMaxFor(0, dir); err != nil || got <= 0 {
		t.Errorf("the default: %d %v", got, err)
	}
}
