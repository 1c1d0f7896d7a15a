package diskguard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// volume is an injectable free-space probe.
type volume struct {
	mu   sync.Mutex
	free uint64
	err  error
}

func (v *volume) set(free uint64) { v.mu.Lock(); v.free = free; v.mu.Unlock() }

func (v *volume) probe(string) (Space, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return Space{Free: v.free, Total: 10 << 30}, v.err
}

func TestDefaultReserve(t *testing.T) {
	for total, want := range map[uint64]uint64{
		1 << 30:    MinReserve, // 2 % is 20 MiB: the floor
		100 << 30:  2 << 30,    // 2 % of 100 GiB
		0:          MinReserve, // unknown size
		3200 << 20: MinReserve, // 2 % is exactly 64 MiB
	} {
		if got := DefaultReserve(total); got != want {
			t.Errorf("DefaultReserve(%d) = %d, want %d", total, got, want)
		}
	}
}

func TestLowBelowTheReserveAndBackWithMargin(t *testing.T) {
	vol := &volume{free: 200 << 20}
	var mu sync.Mutex
	var changes []bool
	g, err := New(Options{Dir: "x", Reserve: 100 << 20, Probe: vol.probe, Log: logr.Discard(),
		OnChange: func(low bool, _ Space) { mu.Lock(); changes = append(changes, low); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		free uint64
		low  bool
	}{
		{150 << 20, false},
		{99 << 20, true},   // below the reserve
		{105 << 20, true},  // above it, but within the margin
		{113 << 20, false}, // past the reserve and an eighth
		{100 << 20, false}, // at the reserve is not below it
	}
	for _, s := range steps {
		vol.set(s.free)
		g.Check()
		if g.Low() != s.low || g.Free() != s.free {
			t.Fatalf("free %d: low %v free %d, want low %v", s.free, g.Low(), g.Free(), s.low)
		}
		if wantErr := s.low; (g.CheckSpace() != nil) != wantErr {
			t.Fatalf("free %d: CheckSpace %v", s.free, g.CheckSpace())
		}
	}
	if len(changes) != 2 || !changes[0] || changes[1] {
		t.Errorf("changes %v, want [true false]", changes)
	}
	if err := g.CheckSpace(); err != nil {
		t.Fatal(err)
	}
	vol.set(0)
	g.Check()
	if e := g.CheckSpace(); bridge.ErrorKind(e) != bridge.KindInsufficientStorage {
		t.Errorf("CheckSpace %v, want insufficient storage", e)
	}
}

func TestUnreadableVolumeKeepsTheLastState(t *testing.T) {
	vol := &volume{free: 1 << 20}
	g, err := New(Options{Dir: "x", Reserve: 100 << 20, Probe: vol.probe, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	vol.mu.Lock()
	vol.err = errors.New("EIO")
	vol.mu.Unlock()
	g.Check()
	if !g.Low() {
		t.Error("a failed reading ended the low state")
	}
}

func TestRunReportsALowStartAndTheRecovery(t *testing.T) {
	vol := &volume{free: 1 << 20}
	got := make(chan bool, 4)
	g, err := New(Options{Dir: "x", Reserve: 100 << 20, Probe: vol.probe, Interval: 5 * time.Millisecond,
		Log: logr.Discard(), OnChange: func(low bool, _ Space) { got <- low }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = g.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if !<-got {
		t.Fatal("a low start was not reported")
	}
	vol.set(1 << 30)
	if <-got {
		t.Fatal("recovery reported as low")
	}
}

// TestStatfsReadsARealVolume: the real probe on the test's temp dir.
func TestStatfsReadsARealVolume(t *testing.T) {
	dir := t.TempDir()
	s, err := Statfs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Total == 0 || s.Free > s.Total {
		t.Fatalf("space %+v", s)
	}
	if _, err := Statfs(dir + "/missing"); err == nil {
		t.Error("a missing directory was read")
	}
}
