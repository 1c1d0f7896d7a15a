// Package diskguard watches the free space of DATA_DIR's volume and tells
// the bridge to stop taking anything in while it is below a reserve, before
// any write can fail: a full disk fails whatsmeow's Signal session write
// inside its decrypt, after which WhatsApp's copy is acknowledged and lost.
// Below the reserve the link stops receiving and new sends are refused
// (507); once space is back above the reserve (with a margin, so that it
// does not flap) both resume by themselves.
package diskguard

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// Space is what the file system says about the volume.
type Space struct {
	Free  uint64 // bytes an unprivileged writer may still use
	Total uint64 // the volume's size in bytes
}

// Probe reads the space of the volume that holds dir.
type Probe func(dir string) (Space, error)

// Statfs is the Probe of the real file system.
func Statfs(dir string) (Space, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Space{}, fmt.Errorf("statfs %s: %w", dir, err)
	}
	bsize := uint64(st.Bsize) //nolint:gosec // a block size is positive
	return Space{Free: st.Bavail * bsize, Total: st.Blocks * bsize}, nil
}

// MinReserve is the smallest default reserve: room for the databases'
// journals and a burst of incoming messages while the guard notices.
const MinReserve = 64 << 20

// DefaultReserve is DISK_RESERVE's default for a volume of total bytes: the
// larger of 64 MiB and 2 % of the volume, but at most a quarter of a volume
// of known size, so that a small volume is not full from the start.
func DefaultReserve(total uint64) uint64 {
	reserve := max(MinReserve, total/50)
	if total > 0 {
		reserve = min(reserve, total/4)
	}
	return reserve
}

// DefaultInterval is how often the free space is read.
const DefaultInterval = time.Second

// ErrDiskFull is the answer to what would write while the disk is below its
// reserve: 507 insufficient_storage, as a full spool answers.
var ErrDiskFull = bridge.Errorf(bridge.KindInsufficientStorage, bridge.CodeInsufficientStorage,
	"DATA_DIR's disk is below its reserve (DISK_RESERVE); nothing was stored; retry once space is freed")

// Options configures a Guard.
type Options struct {
	Dir string
	// Reserve is the free space to keep, in bytes; 0: DefaultReserve of the
	// volume.
	Reserve uint64
	// Interval between two reads of the free space; 0: DefaultInterval.
	Interval time.Duration
	// Probe reads the space; nil: Statfs.
	Probe Probe
	// OnChange hears every change between low and not low, on Run's
	// goroutine, one at a time and in order.
	OnChange func(low bool, s Space)
	Log      logr.Logger
}

// Guard keeps the last reading of the volume's free space.
type Guard struct {
	opts    Options
	reserve uint64

	// checkMu makes the readings and their OnChange one at a time: Run's
	// and those of CheckSpace.
	checkMu sync.Mutex

	mu    sync.Mutex
	low   bool
	space Space
}

// New reads the space once, so that Low is right before Run starts; the
// directory must exist.
func New(opts Options) (*Guard, error) {
	if opts.Probe == nil {
		opts.Probe = Statfs
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	s, err := opts.Probe(opts.Dir)
	if err != nil {
		return nil, err
	}
	g := &Guard{opts: opts, reserve: opts.Reserve}
	if g.reserve == 0 {
		g.reserve = DefaultReserve(s.Total)
	}
	g.space, g.low = s, s.Free < g.reserve
	return g, nil
}

// Reserve is the reserve in bytes.
func (g *Guard) Reserve() uint64 { return g.reserve }

// Low reports whether the free space was below the reserve at the last
// reading (and has not yet come back above it with the margin).
func (g *Guard) Low() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.low
}

// Free is the free space in bytes at the last reading.
func (g *Guard) Free() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.space.Free
}

// CheckSpace is nil, or ErrDiskFull while the disk is low. A low state is
// read again first (a statfs is a few microseconds), so that a request
// right after space came back is not refused for the interval's length.
func (g *Guard) CheckSpace() error {
	if !g.Low() {
		return nil
	}
	g.Check()
	if g.Low() {
		return ErrDiskFull
	}
	return nil
}

// Run reads the space every interval until ctx ends. A first OnChange
// reports a disk that was already low when the guard was made.
func (g *Guard) Run(ctx context.Context) error {
	g.checkMu.Lock()
	if g.Low() {
		g.changed(true, g.snapshot())
	}
	g.checkMu.Unlock()
	ticker := time.NewTicker(g.opts.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			g.Check()
		}
	}
}

func (g *Guard) snapshot() Space {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.space
}

// Check reads the space now and reports a change to OnChange. An unreadable
// volume keeps the last state: the next reading decides.
func (g *Guard) Check() {
	g.checkMu.Lock()
	defer g.checkMu.Unlock()
	s, err := g.opts.Probe(g.opts.Dir)
	if err != nil {
		g.opts.Log.Error(err, "read free disk space")
		return
	}
	g.mu.Lock()
	was := g.low
	g.space = s
	g.low = lowAfter(was, s.Free, g.reserve)
	now := g.low
	g.mu.Unlock()
	if now != was {
		g.changed(now, s)
	}
}

func (g *Guard) changed(low bool, s Space) {
	if low {
		g.opts.Log.Info("disk below its reserve: not receiving from WhatsApp, refusing sends (507) until space is freed",
			"level", "warn", "free_bytes", s.Free, "reserve_bytes", g.reserve)
	} else {
		g.opts.Log.Info("disk space back above its reserve: receiving and sending again",
			"free_bytes", s.Free, "reserve_bytes", g.reserve)
	}
	if g.opts.OnChange != nil {
		g.opts.OnChange(low, s)
	}
}

// lowAfter is the state after a reading of free bytes: low below the
// reserve; once low, only free space of the reserve and an eighth more ends
// it, so that a disk hovering at the reserve does not connect and
// disconnect at every reading.
func lowAfter(wasLow bool, free, reserve uint64) bool {
	if wasLow {
		return free < reserve+reserve/8
	}
	return free < reserve
}
