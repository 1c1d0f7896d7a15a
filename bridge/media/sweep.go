package media

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// sweepBatch bounds the rows one sweep transaction deletes.
const sweepBatch = 500

// sweepLoop deletes expired media every SweepEvery until ctx ends.
func (d *Downloader) sweepLoop(ctx context.Context) {
	durable.Every(ctx, durable.ClockOf(d.store.now), d.opts.SweepEvery, func(ctx context.Context) {
		if _, err := d.sweep(ctx); err != nil && ctx.Err() == nil {
			d.opts.Log.Error(err, "delete expired media")
		}
	})
}

// sweep deletes the files, then the rows, of expired media; it returns
// how many. A crash in between leaves rows without files, which the next
// sweep deletes.
func (d *Downloader) sweep(ctx context.Context) (int64, error) {
	return durable.Chunked(ctx, sweepBatch, func(ctx context.Context, limit int) (int, error) {
		ids, err := d.store.expiredIDs(ctx, d.store.now(), limit)
		if err != nil || len(ids) == 0 {
			return 0, err
		}
		for _, id := range ids {
			if err := os.Remove(d.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return 0, err
			}
		}
		return len(ids), d.store.remove(ctx, ids)
	})
}

// CleanUp deletes what a crash left in DATA_DIR/media: half-written
// scratch and sealing files (their media is still pending, so it is
// downloaded again), and files whose media row is gone. Call it at
// start-up, before Run and before the API serves media: beside a running
// download it would delete that download's scratch file.
func (d *Downloader) CleanUp(ctx context.Context) error {
	entries, err := os.ReadDir(d.opts.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		remove := strings.HasSuffix(name, ".part") || strings.HasSuffix(name, ".seal")
		if id, err := ParseID(idPrefix + name); err == nil {
			known, err := d.store.exists(ctx, id)
			if err != nil {
				return err
			}
			remove = !known
		}
		if remove {
			if err := os.Remove(filepath.Join(d.opts.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
