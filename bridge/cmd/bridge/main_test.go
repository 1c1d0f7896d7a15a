package main

import (
	"runtime"
	"testing"
)

func TestHeapProfileIsSampledOnlyWhenItCanBeServed(t *testing.T) {
	if got := heapProfileRate(true); got != runtime.MemProfileRate || got == 0 {
		t.Errorf("with PPROF: rate %d, want Go's default %d", got, runtime.MemProfileRate)
	}
	if got := heapProfileRate(false); got != 0 {
		t.Errorf("without PPROF: rate %d, want 0 (no samples)", got)
	}
}
