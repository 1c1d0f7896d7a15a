package media

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Open is media id, decrypted, for GET /api/media/{id}. A media not yet
// downloaded is downloaded now, waiting up to DownloaderOptions.Wait
// (bridge.ErrMediaPending after that: the download goes on). The errors
// are bridge errors: ErrInvalidID, ErrMediaNotFound, ErrMediaExpired,
// ErrMediaDownloadFailed, ErrNotLinked, ErrMediaPending, ErrMediaCorrupt.
func (d *Downloader) Open(ctx context.Context, id string) (*bridge.MediaFile, error) {
	id, err := ParseID(id)
	if err != nil {
		return nil, err
	}
	rec, err := d.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec.state == statePending {
		if err := d.await(ctx, id); err != nil {
			return nil, err
		}
		if rec, err = d.lookup(ctx, id); err != nil {
			return nil, err
		}
	}
	switch rec.state {
	case stateDone:
		return d.openFile(ctx, rec)
	case stateFailed:
		return nil, bridge.ErrMediaDownloadFailed
	}
	return nil, bridge.ErrMediaPending
}

// lookup reads id's row, refusing an unknown or expired one.
func (d *Downloader) lookup(ctx context.Context, id string) (record, error) {
	rec, err := d.store.get(ctx, id)
	switch {
	case errors.Is(err, errNoRow):
		return rec, bridge.ErrMediaNotFound
	case err != nil:
		return rec, bridge.Internal(bridge.CodeReadFailed, "the media could not be looked up", err)
	case d.store.expired(rec, d.store.now()):
		return rec, bridge.ErrMediaExpired
	}
	// A key allowed some chats reads the media of those only, and is
	// refused before anything is downloaded for it.
	if caller := bridge.CallerOf(ctx); !caller.AllChats() {
		chat, err := bridge.ParseRecipient(rec.chat)
		if err != nil {
			return rec, caller.RequireChat(bridge.Recipient{})
		}
		if err := caller.RequireChat(chat); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// await downloads id now, or joins its download under way, and waits for
// it up to Wait.
func (d *Downloader) await(ctx context.Context, id string) error {
	timer := time.NewTimer(d.opts.Wait)
	defer timer.Stop()
	j := d.start(id)
	for {
		j.once.Do(func() { close(j.urgent) })
		if err := j.wait(ctx, timer.C); err != nil {
			return err
		}
		if !j.notDue {
			break
		}
		j = d.start(id) // joined a background job that let it be: ask again
	}
	switch err := j.err; {
	case err == nil:
		return nil
	case errors.Is(err, bridge.ErrNotLinked), errors.Is(err, bridge.ErrMediaNotFound):
		return err
	default:
		return &bridge.Error{Kind: bridge.KindUpstream, Code: bridge.ErrMediaDownloadFailed.Code,
			Message: bridge.ErrMediaDownloadFailed.Message, Err: err}
	}
}

// wait waits for j to end, for the timeout or for ctx.
func (j *job) wait(ctx context.Context, timeout <-chan time.Time) error {
	j.waiting.Add(1)
	defer j.waiting.Add(-1)
	select {
	case <-j.done:
		return nil
	case <-timeout:
		return bridge.ErrMediaPending
	case <-ctx.Done():
		return ctx.Err()
	}
}

// openFile opens rec's sealed file. A missing or damaged file is refused,
// and its media set to be downloaded again.
func (d *Downloader) openFile(ctx context.Context, rec record) (*bridge.MediaFile, error) {
	r, err := Open(d.path(rec.id), d.opts.Key)
	if errors.Is(err, ErrCorrupt) || errors.Is(err, fs.ErrNotExist) {
		d.opts.Log.Error(err, "stored media refused; it will be downloaded again", "id", rec.id)
		_ = os.Remove(d.path(rec.id))
		if err := d.store.redo(ctx, rec.id); err != nil {
			d.opts.Log.Error(err, "set damaged media to download again", "id", rec.id)
		}
		return nil, bridge.ErrMediaCorrupt
	}
	if err != nil {
		return nil, bridge.Internal(bridge.CodeReadFailed, "the media file could not be opened", err)
	}
	return &bridge.MediaFile{
		ID: rec.id, MimeType: rec.mimeType, FileName: rec.fileName, SHA256: rec.sha256,
		ReceivedAt: time.UnixMilli(rec.createdAt), Content: r,
	}, nil
}
