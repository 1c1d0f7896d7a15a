package media

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/durable"
)

// Source fetches an attachment from WhatsApp into dst, streaming: the
// session (whatsapp.Session.Download) through the wiring. It answers
// bridge.ErrNotLinked without a session, a *bridge.Error of KindUpstream or
// KindInvalid when the file can never be fetched (gone, does not verify),
// and any other error for a failure worth retrying.
type Source interface {
	Download(ctx context.Context, source []byte, dst *Scratch) error
}

// Defaults of DownloaderOptions.
const (
	defaultWorkers = 2
	defaultWait    = time.Minute
)

// Retries of a download that failed for a reason that may pass (network);
// after the last one the media is failed. Without a session the download
// waits notLinkedDelay, as often as needed, until the media expires.
var retryDelays = durable.Schedule{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}

const (
	notLinkedDelay = 30 * time.Second
	maxIdle        = 30 * time.Second // the longest the loop sleeps without looking
	dueBatch       = 4                // due rows read per look, per worker
)

// DownloaderOptions configures a Downloader.
type DownloaderOptions struct {
	Store *Store
	// Dir is DATA_DIR/media.
	Dir string
	// Key is the media files' key (DeriveKey).
	Key    []byte
	Source Source
	// Workers bounds concurrent background downloads (default 2); as many
	// again may run for GET requests that asked for a media not yet here.
	Workers int
	// Wait bounds how long a GET waits for a download (default 1 minute).
	Wait time.Duration
	// SweepEvery is how often expired media is deleted (default: a quarter
	// of the retention, from 1 s to 1 h).
	SweepEvery time.Duration
	Log        logr.Logger
}

// Downloader downloads every registered media in the background, a few at
// a time, and at once when it is asked for (Open) before its turn; it
// deletes expired media. A download's state is in the store, so a restart
// picks up where a crash left off.
type Downloader struct {
	opts   DownloaderOptions
	store  *Store
	bg     chan struct{} // slots of background downloads
	demand chan struct{} // slots of downloads someone waits for

	// base outlives requests: a download a GET started goes on when the
	// client leaves, for the next ask. Run's end cancels it.
	base   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]*job
}

// job is one download under way; done closes when err and notDue are set.
type job struct {
	done   chan struct{}
	err    error
	urgent chan struct{} // closed when someone waits for it
	once   sync.Once
	// waiting counts the readers waiting for it now, which tests watch
	// to know that a reader joined a download under way.
	waiting atomic.Int32
	// notDue: a background job found its media no longer due and attempted
	// nothing. The loop's list of due media is read before it starts the
	// jobs, so it can name a media whose previous job has just failed and
	// set its retry; attempting it again at once would skip the delay.
	notDue bool
}

// isUrgent reports whether someone waits for the job.
func (j *job) isUrgent() bool {
	select {
	case <-j.urgent:
		return true
	default:
		return false
	}
}

// NewDownloader returns a Downloader; Run must run for background downloads
// and expiry, Open works at once.
func NewDownloader(opts DownloaderOptions) *Downloader {
	if opts.Workers <= 0 {
		opts.Workers = defaultWorkers
	}
	if opts.Wait <= 0 {
		opts.Wait = defaultWait
	}
	if opts.SweepEvery <= 0 {
		opts.SweepEvery = min(max(opts.Store.retention/4, time.Second), time.Hour)
	}
	base, cancel := context.WithCancel(context.Background())
	return &Downloader{
		opts: opts, store: opts.Store, base: base, cancel: cancel,
		bg: make(chan struct{}, opts.Workers), demand: make(chan struct{}, opts.Workers),
		inflight: map[string]*job{},
	}
}

// path is where media id's sealed file is kept.
func (d *Downloader) path(id string) string {
	return filepath.Join(d.opts.Dir, strings.TrimPrefix(id, idPrefix))
}

// Run downloads pending media and deletes expired media until ctx ends,
// then stops the downloads under way.
func (d *Downloader) Run(ctx context.Context) error {
	defer func() {
		d.mu.Lock()
		d.cancel() // under mu: no download starts after it
		d.mu.Unlock()
		d.wg.Wait()
	}()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.sweepLoop(ctx)
	}()
	durable.Loop{
		Pass: d.pass, NextDue: func(ctx context.Context) (time.Time, bool) { return d.store.nextDue(ctx, d.store.now()) },
		// Register and an ended download notify it; Register from inside a
		// Batcher transaction, and an empty Do returns once that committed.
		Wake: d.store.registered, MaxIdle: maxIdle, Clock: durable.ClockOf(d.store.now),
		Committed: func(ctx context.Context) { _ = d.store.batcher.Do(ctx, func(*sql.Tx) error { return nil }) },
	}.Run(ctx)
	return nil
}

// pass starts the downloads of the media due now.
func (d *Downloader) pass(ctx context.Context) durable.Pass {
	ids, err := d.store.due(ctx, d.store.now(), d.opts.Workers*dueBatch)
	if err != nil && ctx.Err() == nil {
		d.opts.Log.Error(err, "read pending media")
	}
	for _, id := range ids {
		d.start(id)
	}
	return durable.Pass{}
}

// start begins downloading id, unless it is under way; either way it
// returns the download.
func (d *Downloader) start(id string) *job {
	d.mu.Lock()
	defer d.mu.Unlock()
	if j, ok := d.inflight[id]; ok {
		return j
	}
	j := &job{done: make(chan struct{}), urgent: make(chan struct{})}
	if err := d.base.Err(); err != nil { // stopped
		j.err = err
		close(j.done)
		return j
	}
	d.inflight[id] = j
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		j.err = d.runJob(j, id)
		d.mu.Lock()
		delete(d.inflight, id)
		d.mu.Unlock()
		close(j.done)
		d.nudge()
	}()
	return j
}

// causeNotLinked is the error of a download deferred for want of a session.
const causeNotLinked = "no linked session"

// SessionConnected starts the downloads deferred for want of a session now
// instead of at their next look (up to notLinkedDelay later): the wiring
// calls it whenever the session connects, for instance just after a
// restart, when every pending download found no session yet.
func (d *Downloader) SessionConnected(ctx context.Context) error {
	n, err := d.store.wakeDeferred(ctx, d.store.now())
	if n > 0 {
		d.nudge()
	}
	return err
}

// nudge makes the loop look for due media now.
func (d *Downloader) nudge() { d.store.registered.Notify() }

// runJob waits for a slot, downloads and records the outcome. A download
// someone waits for takes a slot of its own, so it never queues behind the
// background's.
func (d *Downloader) runJob(j *job, id string) error {
	slots := d.bg
	select {
	case d.bg <- struct{}{}:
	case <-j.urgent:
		slots = d.demand
		select {
		case d.demand <- struct{}{}:
		case <-d.base.Done():
			return d.base.Err()
		}
	case <-d.base.Done():
		return d.base.Err()
	}
	defer func() { <-slots }()
	return d.download(d.base, id, j)
}

// download fetches pending media id and records how it went; unless
// someone waits for it, only when it is due.
func (d *Downloader) download(ctx context.Context, id string, j *job) error {
	rec, err := d.store.get(ctx, id)
	if errors.Is(err, errNoRow) {
		return bridge.ErrMediaNotFound
	}
	if err != nil || rec.state != statePending {
		return err
	}
	if rec.nextAttemptAt > d.store.now().UnixMilli() && !j.isUrgent() {
		j.notDue = true
		return nil
	}
	err = d.fetch(ctx, rec)
	if ctx.Err() != nil {
		return ctx.Err() // stopping: the row stays pending for the next start
	}
	if settleErr := d.settle(ctx, rec, err); settleErr != nil {
		return errors.Join(err, settleErr)
	}
	return err
}

// errMismatch: the downloaded file is not the one the message announced.
var errMismatch = errors.New("media: the downloaded file's SHA-256 differs from the message's")

// fetch downloads rec into a scratch file and seals it as rec's file.
func (d *Downloader) fetch(ctx context.Context, rec record) error {
	final := d.path(rec.id)
	if d.intact(final, rec.sha256) {
		return nil // sealed before a crash that came before its state was stored
	}
	scratchPath := final + ".part"
	_ = os.Remove(scratchPath)
	scratch, err := NewScratch(scratchPath)
	if err != nil {
		return err
	}
	defer scratch.Remove()
	if err := d.opts.Source.Download(ctx, rec.source, scratch); err != nil {
		return err
	}
	return d.seal(scratch, final, rec.sha256)
}

// seal copies the downloaded plaintext into a new sealed file, checking
// its SHA-256 on the way, and moves it to final once it is on disk.
func (d *Downloader) seal(src *Scratch, final, wantSHA256 string) error {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	tmp := final + ".seal"
	_ = os.Remove(tmp)
	w, err := Create(tmp, d.opts.Key)
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, h), src); err != nil {
		w.Abort()
		return err
	}
	if wantSHA256 != "" && hex.EncodeToString(h.Sum(nil)) != wantSHA256 {
		w.Abort()
		return errMismatch
	}
	if err := w.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(d.opts.Dir)
}

// intact reports whether path is a sealed file of this key whose content
// has the SHA-256 wantSHA256.
func (d *Downloader) intact(path, wantSHA256 string) bool {
	r, err := Open(path, d.opts.Key)
	if err != nil {
		return false
	}
	defer func() { _ = r.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return false
	}
	return wantSHA256 == "" || hex.EncodeToString(h.Sum(nil)) == wantSHA256
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir) //nolint:gosec // DATA_DIR/media
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	return f.Sync()
}

// settle records the outcome of a download: done, retried later, or
// failed for good.
func (d *Downloader) settle(ctx context.Context, rec record, err error) error {
	now := d.store.now()
	switch {
	case err == nil:
		kept, err := d.store.finish(ctx, rec.id)
		if err == nil && !kept {
			_ = os.Remove(d.path(rec.id)) // it expired meanwhile
		}
		return err
	case errors.Is(err, bridge.ErrNotLinked):
		d.opts.Log.Info("media download deferred until the session connects", "id", rec.id,
			"at_the_latest", now.Add(notLinkedDelay))
		return d.store.retry(ctx, rec.id, rec.attempts, now.Add(notLinkedDelay), causeNotLinked)
	}
	delay, retry := retryDelays.After(rec.attempts + 1)
	if permanent(err) || !retry {
		d.opts.Log.Info("media download failed", "id", rec.id, "error", err.Error())
		return d.store.fail(ctx, rec.id, rec.attempts+1, causeText(err))
	}
	d.opts.Log.Info("media download will be retried", "id", rec.id, "error", err.Error())
	return d.store.retry(ctx, rec.id, rec.attempts+1, now.Add(delay), causeText(err))
}

// permanent: retrying cannot help (the file is gone or does not verify).
func permanent(err error) bool {
	if errors.Is(err, errMismatch) {
		return true
	}
	var e *bridge.Error
	return errors.As(err, &e) && (e.Kind == bridge.KindUpstream || e.Kind == bridge.KindInvalid)
}

// causeText is err as the row keeps it.
func causeText(err error) string {
	s := err.Error()
	if len(s) > 500 {
		s = s[:500]
	}
	return s
}
