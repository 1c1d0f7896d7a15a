package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// fakeSender is the Sender port: it records every Send and answers with
// the next of results (nil once they run out), or ErrNotLinked while not
// ready, as the session does.
type fakeSender struct {
	mu      sync.Mutex
	ready   bool
	results []error
	sent    []sentCall
	ids     int
	// during, when set, runs inside Send before it answers (a receipt
	// arriving while the attempt is in flight, a crash, …).
	during func(out bridge.Outgoing)
}

type sentCall struct {
	out bridge.Outgoing
	at  time.Time
}

func (s *fakeSender) Send(_ context.Context, out bridge.Outgoing) error {
	s.mu.Lock()
	s.sent = append(s.sent, sentCall{out: out, at: time.Now()})
	during, ready := s.during, s.ready
	var err error
	if ready && len(s.results) > 0 {
		err, s.results = s.results[0], s.results[1:]
	}
	s.mu.Unlock()
	if during != nil {
		during(out)
	}
	if !ready {
		return bridge.ErrNotLinked
	}
	return err
}

func (s *fakeSender) NewMessageID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("3EB0%012d", s.ids)
}

func (s *fakeSender) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

func (s *fakeSender) setReady(ready bool) {
	s.mu.Lock()
	s.ready = ready
	s.mu.Unlock()
}

func (s *fakeSender) calls() []sentCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentCall(nil), s.sent...)
}

// txEvents is the Events port. It reads the message's stored status
// through the transaction it is given, which proves it runs inside the
// transaction that stores the change.
type txEvents struct {
	mu   sync.Mutex
	seen []string // "<whatsapp id> <status as stored in tx>"
}

func (e *txEvents) MessageStatus(ctx context.Context, tx *sql.Tx, m bridge.Message) error {
	var stored string
	if err := tx.QueryRowContext(ctx, `SELECT status FROM messages WHERE id = ?`, m.ID).Scan(&stored); err != nil {
		return err
	}
	if stored != string(m.Status) {
		return fmt.Errorf("event for %s %s, but the transaction holds %s", m.ID, m.Status, stored)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = append(e.seen, m.WhatsAppID+" "+stored)
	return nil
}

func (e *txEvents) events() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// statuses is the Observer port: it records the statuses messages reach.
type statuses struct {
	mu   sync.Mutex
	seen []bridge.Status
}

func (o *statuses) MessageStatus(s bridge.Status) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, s)
}

func (o *statuses) SendAttempt(bool, time.Duration) {}

func (o *statuses) reached() []bridge.Status {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]bridge.Status(nil), o.seen...)
}

// fixture is a queue on a real encrypted bridge.db in t.TempDir.
type fixture struct {
	t      *testing.T
	path   string
	sender *fakeSender
	events *txEvents
	db     *sql.DB
	writer *sqlite.Batcher
	// The options of the log and the queue, kept across reopenings.
	logOpts   MessageLogOptions
	queueOpts Options
	log       *MessageLog
	q         *Queue
}

func newFixture(t *testing.T, schedule ...time.Duration) *fixture {
	t.Helper()
	f := &fixture{t: t, path: filepath.Join(t.TempDir(), "bridge.db"), sender: &fakeSender{ready: true}, events: &txEvents{}}
	f.logOpts = MessageLogOptions{Outbox: f.events, Log: logr.Discard()}
	f.queueOpts = Options{Sender: f.sender, Schedule: schedule}
	f.open(nil)
	return f
}

// open opens bridge.db, a log and a queue on it, as the bridge builds them:
// the log first, then the queue on it. adjust may change the options, for
// this and every later reopening.
func (f *fixture) open(adjust func(*MessageLogOptions, *Options)) {
	f.t.Helper()
	f.db, f.writer = f.openDB()
	if adjust != nil {
		adjust(&f.logOpts, &f.queueOpts)
	}
	f.logOpts.DB, f.logOpts.Batcher = f.db, f.writer
	f.log = NewMessageLog(f.logOpts)
	f.queueOpts.Log = f.log
	f.q = New(f.queueOpts)
}

// openDB opens bridge.db and its writer until the test ends.
func (f *fixture) openDB() (*sql.DB, *sqlite.Batcher) {
	f.t.Helper()
	db := testutil.OpenBridgeDBAt(f.t, f.path)
	writer := sqlite.NewBatcher(db)
	f.t.Cleanup(writer.Close)
	return db, writer
}

// close stops the writer and closes the database, as a shutdown (or, with
// an attempt in flight, a crash) does.
func (f *fixture) close() {
	f.writer.Close()
	_ = f.db.Close()
}

// run runs the retry worker until the test ends.
func (f *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = f.q.Run(ctx); close(stopped) }()
	f.t.Cleanup(func() {
		cancel()
		<-stopped
	})
}

func (f *fixture) submit(req Request) Result {
	f.t.Helper()
	res, err := f.q.Submit(context.Background(), req)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// waitStatus polls the log until message id has status, for at most 5 s.
func (f *fixture) waitStatus(id string, status bridge.Status) bridge.Message {
	f.t.Helper()
	var m bridge.Message
	if !testutil.Wait(5*time.Second, func() bool {
		var err error
		if m, err = f.q.Get(context.Background(), id); err != nil {
			f.t.Fatal(err)
		}
		return m.Status == status
	}) {
		f.t.Fatalf("message %s is %s after 5 s, want %s (attempts %d, last error %q)", id, m.Status, status, m.Attempts, m.LastError)
	}
	return m
}

// daily returns the delivery rollup's totals.
func (f *fixture) daily() (success, failed int) {
	f.t.Helper()
	err := f.db.QueryRow(`SELECT coalesce(sum(success), 0), coalesce(sum(failed), 0) FROM delivery_daily`).Scan(&success, &failed)
	if err != nil {
		f.t.Fatal(err)
	}
	return success, failed
}

func (f *fixture) count(query string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.db.QueryRow(query, args...).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

var alice = bridge.PhoneRecipient("4915112345678")

func textRequest(texts ...string) Request {
	req := Request{Recipient: alice}
	for _, s := range texts {
		req.Items = append(req.Items, Item{Type: bridge.TypeText, Text: s})
	}
	return req
}

// spooled writes content to a new file in dir, as the HTTP layer spools.
func spooled(t *testing.T, dir, name, content string) *SpooledFile {
	t.Helper()
	f, err := os.CreateTemp(dir, "upload-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return &SpooledFile{Path: f.Name(), Name: name, MimeType: "application/pdf", Size: int64(len(content))}
}

// wantError fails unless err is a bridge.Error of kind and code.
func wantError(t *testing.T, err error, kind bridge.Kind, code string) {
	t.Helper()
	var e *bridge.Error
	if !errors.As(err, &e) || e.Kind != kind || e.Code != code {
		t.Fatalf("error %v, want kind %d code %s", err, kind, code)
	}
}
