package workingset

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

func TestQuietTrimsOnlyAfterAQuietPeriod(t *testing.T) {
	quiet := Quiet{After: time.Minute, AfterCollection: 10 * time.Second, MaxBusy: 0.05}
	for _, c := range []struct {
		name         string
		elapsed, cpu time.Duration
		collected    bool
		want         bool
	}{
		{"idle, period not over", 59 * time.Second, 0, false, false},
		{"idle, period over", time.Minute, 100 * time.Millisecond, false, true},
		{"at the limit", time.Minute, 3 * time.Second, false, true},
		{"just busy", time.Minute, 3*time.Second + time.Millisecond, false, false},
		{"busy", 2 * time.Minute, time.Minute, false, false},
		{"late look, idle", 10 * time.Minute, 2 * time.Second, false, true},
		{"collection soon after a trim", 9 * time.Second, 0, true, false},
		{"collection in a quiet period", 10 * time.Second, 20 * time.Millisecond, true, true},
		{"collection in a busy period", 30 * time.Second, 5 * time.Second, true, false},
	} {
		if got := quiet.Due(c.elapsed, c.cpu, c.collected); got != c.want {
			t.Errorf("%s: Due(%v, %v, %v) = %v, want %v", c.name, c.elapsed, c.cpu, c.collected, got, c.want)
		}
	}
}

// Each collection signals, and the next one again: the marker re-arms.
func TestCollectionsSignalsEachGarbageCollection(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	collected := Collections(ctx)
	for range 3 {
		testutil.Eventually(t, 10*time.Second, func() bool {
			runtime.GC()
			select {
			case <-collected:
				return true
			default:
				return false
			}
		}, "no signal after a collection")
	}
}
