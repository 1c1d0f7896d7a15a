package workingset

import (
	"testing"
	"time"
)

func TestQuietTrimsOnlyAfterAQuietPeriod(t *testing.T) {
	quiet := Quiet{After: time.Minute, MaxBusy: 0.05}
	for _, c := range []struct {
		name         string
		elapsed, cpu time.Duration
		want         bool
	}{
		{"idle, period not over", 59 * time.Second, 0, false},
		{"idle, period over", time.Minute, 100 * time.Millisecond, true},
		{"at the limit", time.Minute, 3 * time.Second, true},
		{"just busy", time.Minute, 3*time.Second + time.Millisecond, false},
		{"busy", 2 * time.Minute, time.Minute, false},
		{"late look, idle", 10 * time.Minute, 2 * time.Second, true},
	} {
		if got := quiet.Due(c.elapsed, c.cpu); got != c.want {
			t.Errorf("%s: Due(%v, %v) = %v, want %v", c.name, c.elapsed, c.cpu, got, c.want)
		}
	}
}
