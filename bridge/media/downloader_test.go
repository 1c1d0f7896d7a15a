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
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// fakeSource is WhatsApp's media servers: files by source, errors to
// answer first, and a gate that holds every download while it is set.
type fakeSource struct {
	mu      sync.Mutex
	files   map[string][]byte
	errs    map[string][]error
	gate    chan struct{}
	calls   int
	running map[string]bool
	active  int
	peak    int
}

func (f *fakeSource) Download(ctx context.Context, source []byte, dst *Scratch) error {
	f.mu.Lock()
	f.calls++
	f.active++
	f.running[string(source)] = true
	f.peak = max(f.peak, f.active)
	var err error
	if errs := f.errs[string(source)]; len(errs) > 0 {
		err, f.errs[string(source)] = errs[0], errs[1:]
	}
	data, gate := f.files[string(source)], f.gate
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.running, string(source))
		f.active--
		f.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	// As whatsmeow does: write, then rewrite in place.
	if _, err := dst.Write(data); err != nil {
		return err
	}
	_, err = dst.WriteAt(data, 0)
	return err
}

func (f *fakeSource) set(fn func(f *fakeSource)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeSource) stats() (calls, peak int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.peak
}

// clock is a settable time.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

type fixture struct {
	t       *testing.T
	db      *sql.DB
	batcher *sqlite.Batcher
	store   *Store
	dl      *Downloader
	dir     string
	key     []byte
	src     *fakeSource
	clock   *clock
	opts    DownloaderOptions
}

const retention = time.Hour

func newFixture(t *testing.T, tune ...func(*DownloaderOptions)) *fixture {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	fx := &fixture{t: t, db: db, batcher: sqlite.NewBatcher(db), dir: t.TempDir(), key: testKey(t),
		src: &fakeSource{files: map[string][]byte{}, errs: map[string][]error{}, running: map[string]bool{}}, clock: &clock{}}
	t.Cleanup(fx.batcher.Close)
	fx.clock.ms.Store(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).UnixMilli())
	fx.store = NewStore(db, fx.batcher, retention, fx.clock.now)
	fx.opts = DownloaderOptions{Store: fx.store, Dir: fx.dir, Key: fx.key, Source: fx.src, Log: logr.Discard(),
		SweepEvery: 10 * time.Millisecond}
	for _, f := range tune {
		f(&fx.opts)
	}
	fx.dl = NewDownloader(fx.opts)
	return fx
}

// restart is a new Downloader on the same table and folder, as after a
// crash, cleaned up as the bridge does at start-up.
func (fx *fixture) restart() {
	fx.t.Helper()
	fx.dl = NewDownloader(fx.opts)
	if err := fx.dl.CleanUp(context.Background()); err != nil {
		fx.t.Fatal(err)
	}
}

// register stores an incoming message with data as its attachment, the
// way the wiring does, and returns its media id.
func (fx *fixture) register(whatsappID string, data []byte) string {
	fx.t.Helper()
	return fx.registerIn(bridge.PhoneRecipient("4915112345678"), whatsappID, data)
}

// registerIn is register for a message of chat.
func (fx *fixture) registerIn(chat bridge.Recipient, whatsappID string, data []byte) string {
	fx.t.Helper()
	sum := sha256.Sum256(data)
	in := bridge.Incoming{WhatsAppID: whatsappID, Chat: chat, Type: "document", Media: &bridge.Media{
		MimeType: "application/pdf", FileName: "invoice.pdf", Size: uint64(len(data)),
		SHA256: hex.EncodeToString(sum[:]), Source: []byte("src-" + whatsappID),
	}}
	fx.src.set(func(f *fakeSource) { f.files["src-"+whatsappID] = data })
	if err := fx.batcher.Do(context.Background(), func(tx *sql.Tx) error {
		return fx.store.Register(context.Background(), tx, &in)
	}); err != nil {
		fx.t.Fatal(err)
	}
	if _, err := ParseID(in.Media.ID); err != nil {
		fx.t.Fatalf("registered media id %q: %v", in.Media.ID, err)
	}
	return in.Media.ID
}

// run runs the Downloader until the test ends.
func (fx *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	dl := fx.dl
	go func() { done <- dl.Run(ctx) }()
	fx.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			fx.t.Error(err)
		}
	})
}

func (fx *fixture) state(id string) record {
	fx.t.Helper()
	rec, err := fx.store.get(context.Background(), id)
	if err != nil {
		fx.t.Fatal(err)
	}
	return rec
}

func (fx *fixture) waitState(id, state string) record {
	fx.t.Helper()
	return testutil.Poll(fx.t, 10*time.Second, func() (record, bool) {
		rec := fx.state(id)
		return rec, rec.state == state
	}, "media %s never became %s", id, state)
}

// read opens id and reads it whole.
func (fx *fixture) read(ctx context.Context, id string) ([]byte, error) {
	f, err := fx.dl.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Content.Close() }()
	return io.ReadAll(f.Content)
}

func (fx *fixture) files() []string {
	entries, _ := os.ReadDir(fx.dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func anything[T any](T) bool { return true }

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if bridge.ErrorOf(err).Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

// A registered media is downloaded in the background into its sealed
// file and served with its details; the same message registered again
// keeps its media id.
func TestBackgroundDownload(t *testing.T) {
	fx := newFixture(t)
	data := randomBytes(200 << 10)
	id := fx.register("wa1", data)
	if again := fx.register("wa1", data); again != id {
		t.Fatalf("the message registered again got %s, first %s", again, id)
	}
	fx.run()
	fx.waitState(id, stateDone)
	f, err := fx.dl.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f.Content)
	_ = f.Content.Close()
	if string(got) != string(data) || f.FileName != "invoice.pdf" || f.MimeType != "application/pdf" || f.ID != id {
		t.Fatalf("served %d bytes, %+v", len(got), f)
	}
	if names := fx.files(); len(names) != 1 || names[0] != strings.TrimPrefix(id, "med_") {
		t.Fatalf("files %v", names)
	}
	if calls, _ := fx.src.stats(); calls != 1 {
		t.Fatalf("%d downloads", calls)
	}
}

// A message without an attachment registers nothing.
func TestRegisterWithoutMedia(t *testing.T) {
	fx := newFixture(t)
	in := bridge.Incoming{WhatsAppID: "wa-text", Type: "text", Text: "hi"}
	if err := fx.batcher.Do(context.Background(), func(tx *sql.Tx) error {
		return fx.store.Register(context.Background(), tx, &in)
	}); err != nil {
		t.Fatal(err)
	}
	var n int
	_ = fx.db.QueryRow(`SELECT count(*) FROM media`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows", n)
	}
}

// Open of a media not yet downloaded downloads it at once, without the
// background loop; a second reader joins the same download; a reader that
// waits too long is told it is still pending.
func TestOpenDownloadsOnDemand(t *testing.T) {
	fx := newFixture(t, func(o *DownloaderOptions) { o.Wait = 300 * time.Millisecond })
	data := randomBytes(100 << 10)
	id := fx.register("wa1", data)
	gate := make(chan struct{})
	fx.src.set(func(f *fakeSource) { f.gate = gate })
	_, err := fx.read(context.Background(), id)
	wantCode(t, err, "media_pending")

	fx.dl.opts.Wait = 10 * time.Second // no read below times out, however slow the disk
	got := make(chan []byte, 2)
	for range 2 {
		go func() {
			b, err := fx.read(context.Background(), id)
			if err != nil {
				t.Error(err)
			}
			got <- b
		}()
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		fx.dl.mu.Lock()
		defer fx.dl.mu.Unlock()
		j := fx.dl.inflight[id]
		return j != nil && j.waiting.Load() == 2
	}, "the readers never joined the download under way")
	close(gate)
	for range 2 {
		if b := testutil.Receive(t, 5*time.Second, got, anything[[]byte], "no read ended"); string(b) != string(data) {
			t.Fatalf("read %d bytes", len(b))
		}
	}
	if calls, _ := fx.src.stats(); calls != 1 {
		t.Fatalf("%d downloads for one media", calls)
	}
}

// Background downloads run at most Workers at a time; a media someone
// asks for does not queue behind them.
func TestConcurrencyIsBounded(t *testing.T) {
	fx := newFixture(t)
	gate := make(chan struct{})
	fx.src.set(func(f *fakeSource) { f.gate = gate })
	var ids, waIDs []string
	for i := range 6 {
		waIDs = append(waIDs, "wa"+string(rune('a'+i)))
		ids = append(ids, fx.register(waIDs[i], randomBytes(1000)))
	}
	fx.run()
	testutil.Eventually(t, 5*time.Second, func() bool { _, peak := fx.src.stats(); return peak == 2 }, "two downloads never ran")
	// Every job started: the four beyond the slots wait for one, so the
	// peak can only have grown by now, not later.
	testutil.Eventually(t, 5*time.Second, func() bool {
		fx.dl.mu.Lock()
		defer fx.dl.mu.Unlock()
		return len(fx.dl.inflight) == len(ids)
	}, "not every download started")
	if _, peak := fx.src.stats(); peak != 2 {
		t.Fatalf("%d concurrent background downloads, want 2", peak)
	}
	// A media waiting for its turn, asked for, gets a slot of its own.
	waiting := ""
	fx.src.set(func(f *fakeSource) {
		for i, wa := range waIDs {
			if !f.running["src-"+wa] {
				waiting = ids[i]
			}
		}
	})
	read := make(chan error, 1)
	go func() { _, err := fx.read(context.Background(), waiting); read <- err }()
	testutil.Eventually(t, 5*time.Second, func() bool { _, peak := fx.src.stats(); return peak == 3 }, "the asked-for media waited")
	close(gate)
	if err := testutil.Receive(t, 5*time.Second, read, anything[error], "the read never ended"); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		fx.waitState(id, stateDone)
	}
}

// A background job started from a list of due media read before the
// previous job failed finds the media waiting for its retry and attempts
// nothing; a reader still gets its download at once.
func TestStaleDueListWaitsForTheRetry(t *testing.T) {
	fx := newFixture(t)
	id := fx.register("wa-flaky", []byte("flaky"))
	netErr := errors.New("connection reset")
	fx.src.set(func(f *fakeSource) { f.errs["src-wa-flaky"] = []error{netErr} })
	ended := func(j *job) *job {
		select {
		case <-j.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the job never ended")
		}
		return j
	}
	if j := ended(fx.dl.start(id)); j.notDue || j.err == nil {
		t.Fatalf("first attempt: notDue %v, err %v", j.notDue, j.err)
	}
	if j := ended(fx.dl.start(id)); !j.notDue || j.err != nil {
		t.Fatalf("stale start: notDue %v, err %v", j.notDue, j.err)
	}
	if rec := fx.state(id); rec.attempts != 1 || rec.state != statePending {
		t.Fatalf("after the stale start: %+v", rec)
	}
	f, err := fx.dl.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Content.Close()
	if rec := fx.state(id); rec.attempts != 1 || rec.state != stateDone {
		t.Fatalf("after the read: %+v", rec)
	}
}

// Failures: a file that does not match its SHA-256 or that WhatsApp no
// longer has fails at once, leaving no file; a network error is retried
// on schedule, then fails; without a session the media waits, no attempt
// counted, and a reader is told no session is linked.
func TestFailures(t *testing.T) {
	fx := newFixture(t)
	mismatch := fx.register("wa-mismatch", []byte("announced"))
	fx.src.set(func(f *fakeSource) { f.files["src-wa-mismatch"] = []byte("something else") })
	gone := fx.register("wa-gone", []byte("x"))
	flaky := fx.register("wa-flaky", []byte("flaky"))
	unlinked := fx.register("wa-unlinked", []byte("later"))
	netErr := errors.New("connection reset")
	fx.src.set(func(f *fakeSource) {
		f.errs["src-wa-gone"] = []error{bridge.Errorf(bridge.KindUpstream, "media_download_failed", "404")}
		f.errs["src-wa-flaky"] = []error{netErr, netErr, netErr, netErr, netErr}
		f.errs["src-wa-unlinked"] = []error{bridge.ErrNotLinked}
	})
	_, err := fx.read(context.Background(), unlinked)
	wantCode(t, err, "not_linked")
	if rec := fx.state(unlinked); rec.attempts != 0 || rec.state != statePending || rec.err != "no linked session" {
		t.Fatalf("media without a session: %+v", rec)
	}
	fx.run()
	for _, id := range []string{mismatch, gone} {
		fx.waitState(id, stateFailed)
		_, err := fx.read(context.Background(), id)
		wantCode(t, err, "media_download_failed")
	}
	for i := 1; i <= len(retryDelays); i++ {
		testutil.Eventually(t, 5*time.Second, func() bool { return fx.state(flaky).attempts == i }, "attempt %d", i)
		if rec := fx.state(flaky); rec.state != statePending || rec.err != "connection reset" {
			t.Fatalf("after attempt %d: %+v", i, rec)
		}
		fx.clock.advance(retryDelays[i-1])
		fx.dl.nudge()
	}
	fx.waitState(flaky, stateFailed)
	fx.waitState(unlinked, stateDone)
	for _, name := range fx.files() {
		if name != strings.TrimPrefix(unlinked, "med_") {
			t.Errorf("file %s left behind", name)
		}
	}
}

// What a crash leaves is cleaned up at the next start: half-written
// scratch and sealing files and files of unknown media are deleted, the
// pending media downloaded again, and a file sealed just before the crash
// is kept without downloading it again.
func TestRestartAfterCrash(t *testing.T) {
	fx := newFixture(t)
	data := randomBytes(150 << 10)
	pending := fx.register("wa1", data)
	sealedBefore := fx.register("wa2", []byte("sealed before the crash"))
	stale := []string{
		strings.TrimPrefix(pending, "med_") + ".part", strings.TrimPrefix(pending, "med_") + ".seal",
		strings.TrimPrefix(NewID(), "med_"),
	}
	for _, name := range stale {
		if err := os.WriteFile(filepath.Join(fx.dir, name), []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	seal(t, fx.dl.path(sealedBefore), fx.key, []byte("sealed before the crash"), 100)
	fx.src.set(func(f *fakeSource) { delete(f.files, "src-wa2") }) // gone from WhatsApp by now
	fx.restart()
	fx.run()
	fx.waitState(pending, stateDone)
	fx.waitState(sealedBefore, stateDone)
	if got, err := fx.read(context.Background(), pending); err != nil || string(got) != string(data) {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	if got, err := fx.read(context.Background(), sealedBefore); err != nil || string(got) != "sealed before the crash" {
		t.Fatalf("read %q: %v", got, err)
	}
	if calls, _ := fx.src.stats(); calls != 1 {
		t.Fatalf("%d downloads, want 1 (the file sealed before the crash is kept)", calls)
	}
	if names := fx.files(); len(names) != 2 {
		t.Fatalf("files %v", names)
	}
}

// Media older than the retention answers media_expired, then the sweep
// deletes its file and row (media_not_found); newer media stays.
func TestRetention(t *testing.T) {
	fx := newFixture(t)
	old := fx.register("wa-old", []byte("old"))
	fx.run()
	fx.waitState(old, stateDone)
	fx.clock.advance(retention / 2)
	young := fx.register("wa-young", []byte("young"))
	fx.waitState(young, stateDone)
	fx.clock.advance(retention / 2)
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, err := fx.store.get(context.Background(), old)
		return errors.Is(err, errNoRow)
	}, "the expired media was not swept")
	_, err := fx.read(context.Background(), old)
	wantCode(t, err, "media_not_found")
	if names := fx.files(); len(names) != 1 || names[0] != strings.TrimPrefix(young, "med_") {
		t.Fatalf("files %v", names)
	}
	if got, err := fx.read(context.Background(), young); err != nil || string(got) != "young" {
		t.Fatalf("young media: %q %v", got, err)
	}
}

// An expired media not yet swept is refused as expired.
func TestExpiredBeforeTheSweep(t *testing.T) {
	fx := newFixture(t, func(o *DownloaderOptions) { o.SweepEvery = time.Hour })
	id := fx.register("wa1", []byte("x"))
	fx.clock.advance(retention)
	_, err := fx.read(context.Background(), id)
	wantCode(t, err, "media_expired")
	if calls, _ := fx.src.stats(); calls != 0 {
		t.Fatal("an expired media was downloaded")
	}
}

// A stored file that was changed is refused (media_corrupt) and the media
// downloaded again, so the next read is whole.
func TestTamperedFileIsRefusedAndFetchedAgain(t *testing.T) {
	fx := newFixture(t)
	data := randomBytes(3 * chunkSize)
	id := fx.register("wa1", data)
	if got, err := fx.read(context.Background(), id); err != nil || string(got) != string(data) {
		t.Fatalf("first read: %v", err)
	}
	path := fx.dl.path(id)
	raw, _ := os.ReadFile(path)
	raw[len(raw)-5] ^= 1
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := fx.read(context.Background(), id)
	wantCode(t, err, "media_corrupt")
	if got, err := fx.read(context.Background(), id); err != nil || string(got) != string(data) {
		t.Fatalf("read after the refusal: %d bytes, %v", len(got), err)
	}
	if calls, _ := fx.src.stats(); calls != 2 {
		t.Fatalf("%d downloads, want 2", calls)
	}
}

func TestOpenRefusesBadIDs(t *testing.T) {
	fx := newFixture(t)
	_, err := fx.read(context.Background(), "med_../../bridge.db")
	wantCode(t, err, "invalid_media_id")
	_, err = fx.read(context.Background(), NewID())
	wantCode(t, err, "media_not_found")
}

// Senders choose message ids: the same id in another chat is another
// message with its own media, never a way to the first chat's file; in the
// same chat it is a redelivery and keeps its media id.
func TestSameIDInAnotherChatIsAnotherMedia(t *testing.T) {
	fx := newFixture(t)
	ana, bob := bridge.PhoneRecipient("4915112345678"), bridge.PhoneRecipient("4915187654321")
	first := fx.registerIn(ana, "3A01", []byte("ana's invoice"))
	if again := fx.registerIn(ana, "3A01", []byte("ana's invoice")); again != first {
		t.Errorf("a redelivery got media %s, want %s", again, first)
	}
	if other := fx.registerIn(bob, "3A01", []byte("bob's file")); other == first {
		t.Errorf("a message of another chat with the same id got ana's media %s", first)
	}
}
