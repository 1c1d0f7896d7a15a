package sendqueue

import (
	"sync/atomic"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
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
	f.open(func(_ *LogOptions, o *Options) { o.Space = disk })
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
