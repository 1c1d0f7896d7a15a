package sendqueue

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// lowDisk is the disk guard's side of the queue: low refuses.
type lowDisk struct{ low atomic.Bool }

func (d *lowDisk) CheckSpace() error {
	if d.low.Load() {
		return bridge.Errorf(bridge.KindInsufficientStorage, "insufficient_storage", "below the reserve")
	}
	return nil
}

// Below the disk reserve a request is refused before anything is stored or
// sent; once space is back it is accepted again.
func TestSubmitRefusedWhileTheDiskIsLow(t *testing.T) {
	disk := &lowDisk{}
	disk.low.Store(true)
	f := newFixture(t)
	f.open(func(_ *MessageLogOptions, o *Options) { o.Space = disk })
	_, err := f.q.Submit(t.Context(), textRequest("refused"))
	wantError(t, err, bridge.KindInsufficientStorage, "insufficient_storage")
	if n := f.count(`SELECT count(*) FROM messages`); n != 0 || len(f.sender.calls()) != 0 {
		t.Errorf("%d messages stored, %d sent while the disk was low", n, len(f.sender.calls()))
	}
	disk.low.Store(false)
	if res := f.submit(textRequest("accepted")); res.Messages[0].Status != bridge.StatusSent {
		t.Errorf("after space came back: %+v", res.Messages[0])
	}
}

// countingDisk is lowDisk that counts the worker's looks.
type countingDisk struct {
	lowDisk
	looks atomic.Int32
}

func (d *countingDisk) CheckSpace() error {
	d.looks.Add(1)
	return d.lowDisk.CheckSpace()
}

// While the disk is low the worker holds the queue: a message waiting for
// its retry is not attempted (an attempt could only fail on the link the
// bridge holds down, and spend the retry), and goes out once space is back.
func TestWorkerHoldsWhileTheDiskIsLow(t *testing.T) {
	disk := &countingDisk{}
	f := newFixture(t, time.Millisecond)
	f.open(func(_ *MessageLogOptions, o *Options) { o.Space = disk })
	f.sender.results = []error{errors.New("down")}
	m := f.submit(textRequest("held")).Messages[0]
	disk.low.Store(true)
	f.run()
	testutil.Eventually(t, 10*time.Second, func() bool { return disk.looks.Load() >= 3 || len(f.sender.calls()) > 1 },
		"the worker neither looked at the disk nor attempted")
	if calls := len(f.sender.calls()); calls != 1 {
		t.Fatalf("%d attempts while the disk was low, want only the immediate one", calls)
	}
	disk.low.Store(false)
	if got := f.waitStatus(m.ID, bridge.StatusSent); got.Attempts != 2 {
		t.Errorf("sent after %d attempts, want 2", got.Attempts)
	}
}
