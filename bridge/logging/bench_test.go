package logging

import (
	"io"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLogLines compares the lines per second of stdout alone with
// stdout plus the day files (real files in a temporary directory), and the
// cost of the deletion check when it runs on every line instead of once a
// second. Stdout is io.Discard in all three, so the differences are the
// files' own cost.
//
//	go test -run '^$' -bench LogLines -benchtime 200000x ./bridge/logging/
func BenchmarkLogLines(b *testing.B) {
	cases := []struct {
		name          string
		files         bool
		checkInterval time.Duration
	}{
		{"stdout_only", false, 0},
		{"stdout_and_files", true, deletionCheckInterval},
		{"stdout_and_files_stat_every_line", true, 0},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dir := ""
			if c.files {
				dir = filepath.Join(b.TempDir(), "logs")
			}
			// A real clock: lines advance time as they would in production.
			log, files, err := New(Options{Stdout: io.Discard, Dir: dir, Level: LevelInfo, Now: time.Now})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = files.Close() }()
			files.checkInterval = c.checkInterval
			log = log.WithName("dispatch").WithValues("account", "491701234567")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				log.Info("message sent", "id", "01JD4K7ZQ8", "attempt", i%4, "after", 15*time.Second)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
