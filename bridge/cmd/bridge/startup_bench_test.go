package main

import (
	"context"
	"io"
	"testing"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// BenchmarkBuild: start-up's own work in this process, without the
// process's exec and package initialisation: build (DATA_DIR locked, the
// databases opened and checked, every part and route made) and close, on a
// DATA_DIR an earlier build made, as an unlinked bridge restarts. Its CPU
// profile is start-up's before the first answer:
//
//	go test -run=NONE -bench=Build -benchtime=200x -cpuprofile=/tmp/build.prof ./bridge/cmd/bridge
func BenchmarkBuild(b *testing.B) {
	dataDir := b.TempDir()
	s := loadSettings(b, dataDir, testutil.TestKeyHex)
	restart := func() {
		a, err := build(context.Background(), s, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		a.close()
	}
	restart() // creates the databases
	b.ResetTimer()
	for range b.N {
		restart()
	}
}
