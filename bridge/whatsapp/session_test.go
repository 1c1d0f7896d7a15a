package whatsapp

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// testHeartbeat is short so that the tests see several heartbeats, and long
// enough for the race detector's slowdown on the keepalive's response
// deadline (half an interval, see TuneKeepAlive).
const testHeartbeat = time.Second

const account = "4915100000001"

func TestMain(m *testing.M) {
	// Both set whatsmeow's process-wide variables: before any client exists.
	// The tests exercise the production keepalive cadence.
	wasim.Install()
	TuneKeepAlive(testHeartbeat)
	os.Exit(m.Run())
}

// bridgeFiles is one bridge's DATA_DIR, reused across restarts.
type bridgeFiles struct {
	dir string
	key []byte // testutil.TestKey, the key testutil.OpenBridgeDBAt opens bridge.db with
}

func newBridgeFiles(t testing.TB) bridgeFiles {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "credentials"), 0o700); err != nil {
		t.Fatal(err)
	}
	return bridgeFiles{dir: dir, key: testutil.TestKey()}
}

// credentials opens the files' session.db, closed at cleanup.
func (f bridgeFiles) credentials(t *testing.T) *credentials {
	t.Helper()
	c, err := openCredentials(context.Background(), filepath.Join(f.dir, "credentials", "session.db"), f.key, newWALogger(logr.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.close() })
	return c
}

// fakeEvents records what a Session reports; Incoming and Receipt fail
// with incomingErr and receiptErr when set.
type fakeEvents struct {
	mu          sync.Mutex
	states      []bridge.SessionStatus
	incoming    []bridge.Incoming
	receipts    []bridge.Receipt
	reconnects  int
	incomingErr error
	receiptErr  error
	// tries counts Incoming's calls by WhatsApp id, failed ones included.
	tries map[string]int
	// held, when set, receives each incoming message's WhatsApp id and
	// Incoming then waits for release before it stores and returns.
	held    chan<- string
	release <-chan struct{}
	// groups are the group changes reported (groups_test.go).
	groups []bridge.GroupChange
}

// SessionChanged: the message log's part of a state change; the outbox's
// (SessionStatus) records it.
func (*fakeEvents) SessionChanged(context.Context, *sql.Tx, bridge.SessionStatus) error { return nil }

// Enabled: the fake outbox takes every event.
func (*fakeEvents) Enabled() bool { return true }

func (f *fakeEvents) SessionStatus(_ context.Context, _ *sql.Tx, s bridge.SessionStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states = append(f.states, s)
	return nil
}

func (f *fakeEvents) Incoming(_ context.Context, in bridge.Incoming) <-chan error {
	return outcome(f.store(in))
}

// outcome is a store's result as Events.Incoming gives it.
func outcome(err error) <-chan error {
	c := make(chan error, 1)
	c <- err
	return c
}

func (f *fakeEvents) store(in bridge.Incoming) error {
	f.mu.Lock()
	held, release := f.held, f.release
	f.mu.Unlock()
	if held != nil {
		held <- in.WhatsAppID
		<-release
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tries == nil {
		f.tries = map[string]int{}
	}
	f.tries[in.WhatsAppID]++
	if f.incomingErr != nil {
		return f.incomingErr
	}
	f.incoming = append(f.incoming, in)
	return nil
}

func (f *fakeEvents) Receipt(_ context.Context, r bridge.Receipt) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.receiptErr != nil {
		return f.receiptErr
	}
	f.receipts = append(f.receipts, r)
	return nil
}

func (f *fakeEvents) Reconnected() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reconnects++
}

// running is a Session whose Run goroutine the test controls.
type running struct {
	*Session
	db     *sql.DB
	events *fakeEvents
	stop   func()
	settle func() // before stop disconnects, when set
}

// start opens the bridge's databases and runs a Session wired to sim, as the
// bridge process does; stop (also at cleanup) ends it like SIGTERM.
func start(t testing.TB, sim *wasim.Simulator, f bridgeFiles, with ...func(*Options)) *running {
	t.Helper()
	r := startWith(t, &Server{HTTPClient: sim.HTTPClient(), RootKey: sim.RootPublicKey()}, f, with...)
	r.settle = func() { wasimtest.Settle(t, sim) }
	return r
}

// startWith is start with the client pointed at server; with changes the
// options before New.
func startWith(t testing.TB, server *Server, f bridgeFiles, with ...func(*Options)) *running {
	t.Helper()
	db := testutil.OpenBridgeDBAt(t, filepath.Join(f.dir, "bridge.db"))
	ctx, cancel := context.WithCancel(context.Background())
	events := &fakeEvents{}
	opts := Options{
		CredentialsDir:    filepath.Join(f.dir, "credentials"),
		MasterKey:         f.key,
		DB:                db,
		HeartbeatInterval: testHeartbeat,
		Log:               testutil.Logger(t),
		Events:            events,
		Messages:          events,
		Outbox:            events,
		Server:            server,
	}
	for _, w := range with {
		w(&opts)
	}
	m, err := New(ctx, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	stopped := false
	r := &running{Session: m, db: db, events: events}
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		if r.settle != nil {
			r.settle()
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		_ = db.Close() // before a restart opens it again
	}
	t.Cleanup(r.stop)
	return r
}

// waitState waits until the status satisfies ok, or fails the test.
func waitState(t testing.TB, m *Session, what string, ok func(bridge.SessionStatus) bool) bridge.SessionStatus {
	t.Helper()
	return testutil.Poll(t, 20*time.Second, func() (bridge.SessionStatus, bool) {
		s := m.Status()
		return s, ok(s)
	}, "waiting for %s", what)
}

func isState(st bridge.SessionState, r bridge.Reason) func(bridge.SessionStatus) bool {
	return func(s bridge.SessionStatus) bool { return s.State == st && s.Reason == r }
}

// linkByQR links a fresh bridge to the phone's account through a QR code.
func linkByQR(t testing.TB, sim *wasim.Simulator, r *running) {
	t.Helper()
	ctx := context.Background()
	qr, err := r.QR(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status().State != contract.StatePairing {
		t.Errorf("state while the QR shows: %s", r.Status().State)
	}
	if _, err := sim.Phone(account).ScanQR(ctx, qr); err != nil {
		t.Fatal(err)
	}
	s := waitState(t, r.Session, "connected", isState(contract.StateConnected, contract.ReasonNone))
	if s.Account != account || s.ConnectedSince.IsZero() || s.LastHeartbeat.IsZero() {
		t.Errorf("after linking: %+v", s)
	}
}

func TestLinkByQRAndRestartReconnects(t *testing.T) {
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	if s := r.Status(); s.State != contract.StateUnpaired {
		t.Fatalf("fresh bridge: %+v", s)
	}
	linkByQR(t, sim, r)

	if _, err := r.QR(context.Background()); !errors.Is(err, bridge.ErrLinked) {
		t.Errorf("QR while linked: %v", err)
	}
	if _, err := r.PairingCode(context.Background(), account); !errors.Is(err, bridge.ErrLinked) {
		t.Errorf("pairing code while linked: %v", err)
	}
	r.stop()

	// The stored row says connected; start-up must not believe it.
	r2 := start(t, sim, f)
	if s := r2.Status(); s.State != contract.StateConnecting || s.Account != account {
		t.Fatalf("after restart, before connecting: %+v", s)
	}
	waitState(t, r2.Session, "reconnected", isState(contract.StateConnected, contract.ReasonNone))
}

func TestLinkByPairingCode(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	code, err := r.PairingCode(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 8 || strings.Contains(code, "-") {
		t.Fatalf("pairing code %q is not 8 characters without a dash", code)
	}
	if _, err := sim.Phone(account).EnterCode(context.Background(), code); err != nil {
		t.Fatal(err)
	}
	s := waitState(t, r.Session, "connected", isState(contract.StateConnected, contract.ReasonNone))
	if s.Account != account {
		t.Errorf("account %q", s.Account)
	}
}

// A ghost connection: the socket stays open but the server stops answering.
// The state leaves connected with keepalive_timeout, and the heartbeat stops
// advancing within 3 intervals of the silence.
func TestKeepAliveSilenceStopsTheHeartbeat(t *testing.T) {
	testutil.SkipIfShort(t, "waits out several heartbeats of silence (about 6 s)")
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	// Let a few heartbeats pass to prove they advance while alive.
	first := r.Status().LastHeartbeat
	waitState(t, r.Session, "a heartbeat", func(s bridge.SessionStatus) bool { return s.LastHeartbeat.After(first) })

	silenced := time.Now()
	sim.Phone(account).StopAnswering()
	s := waitState(t, r.Session, "keepalive timeout", isState(contract.StateDisconnected, contract.ReasonKeepAliveTimeout))
	if s.LastHeartbeat.Sub(silenced) >= 3*testHeartbeat {
		t.Errorf("heartbeat %v still advanced 3 intervals after the silence began at %v", s.LastHeartbeat, silenced)
	}
	frozen := s.LastHeartbeat
	time.Sleep(3 * testHeartbeat)
	if got := r.Status(); got.LastHeartbeat != frozen || got.State == contract.StateConnected {
		t.Errorf("a ghost connection got a heartbeat: %+v", got)
	}
	// The persisted heartbeat agrees with the status.
	stored, err := stateStore{db: r.db}.load(context.Background())
	if err != nil || !stored.LastHeartbeat.Equal(frozen.Truncate(time.Millisecond)) || stored.State != contract.StateDisconnected {
		t.Errorf("stored %+v, %v; want heartbeat %v", stored, err, frozen)
	}

	sim.Phone(account).ResumeAnswering()
	waitState(t, r.Session, "restored", isState(contract.StateConnected, contract.ReasonNone))
}

func TestStreamReplacedStopsReconnecting(t *testing.T) {
	testutil.SkipIfShort(t, "watches 3 s for a reconnect that must not come")
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	sim.Phone(account).ReplaceStream()
	waitState(t, r.Session, "stream replaced", isState(contract.StateDisconnected, contract.ReasonStreamReplaced))
	// whatsmeow would reconnect within 2 s of a network loss; it must not.
	time.Sleep(3 * time.Second)
	if s := r.Status(); s.State != contract.StateDisconnected || s.Reason != contract.ReasonStreamReplaced {
		t.Errorf("after stream replaced: %+v", s)
	}
	if len(sim.Phone(account).Connected()) != 0 {
		t.Error("the bridge reconnected after stream replaced")
	}
}

func TestDroppedSocketReconnects(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	since := r.Status().ConnectedSince
	sim.Phone(account).DropConnections()
	waitState(t, r.Session, "reconnected", func(s bridge.SessionStatus) bool { return s.Connected() && s.ConnectedSince.After(since) })
}

func TestRemoteLogoutWipesCredentials(t *testing.T) {
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	linkByQR(t, sim, r)
	sim.Phone(account).LogOutDevices()
	s := waitState(t, r.Session, "logged out", isState(contract.StateLoggedOut, contract.ReasonLoggedOut))
	if s.Account != "" {
		t.Errorf("account kept after logout: %+v", s)
	}
	// A new link can start right away.
	waitFor(t, "a new link attempt", func() bool { _, err := r.QR(context.Background()); return err == nil })
	assertNoAccountOnDisk(t, f)
}

func TestLogoutWipesCredentialsEvenOffline(t *testing.T) {
	for _, offline := range []bool{false, true} {
		name := map[bool]string{false: "online", true: "offline"}[offline]
		t.Run(name, func(t *testing.T) {
			sim := wasim.Start(t)
			f := newBridgeFiles(t)
			r := start(t, sim, f)
			linkByQR(t, sim, r)
			if offline {
				if err := sim.Close(); err != nil {
					t.Fatal(err)
				}
				waitState(t, r.Session, "disconnected", func(s bridge.SessionStatus) bool { return s.State != contract.StateConnected })
			}
			if err := r.Logout(context.Background()); err != nil {
				t.Fatal(err)
			}
			if s := r.Status(); s.State != contract.StateUnpaired || s.Reason != contract.ReasonUserLogout || s.Account != "" {
				t.Errorf("after logout: %+v", s)
			}
			if !offline && len(sim.Phone(account).Devices()) != 0 {
				t.Error("the phone still lists the linked device")
			}
			assertNoAccountOnDisk(t, f)
			r.stop()
			// A restart finds no credentials.
			r2 := start(t, sim, f)
			if s := r2.Status(); s.State != contract.StateUnpaired {
				t.Errorf("after restart: %+v", s)
			}
		})
	}
}

// assertNoAccountOnDisk: the credentials directory holds no linked device.
func assertNoAccountOnDisk(t *testing.T, f bridgeFiles) {
	t.Helper()
	c := f.credentials(t)
	defer c.close() // before a restart opens it again
	if c.linked() {
		t.Errorf("credentials still hold device %v", c.device.ID)
	}
}

func TestGroups(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	if _, err := r.Groups(context.Background()); !errors.Is(err, bridge.ErrNotLinked) {
		t.Fatalf("groups while unlinked: %v", err)
	}
	linkByQR(t, sim, r)
	me := sim.Phone(account)
	g := sim.CreateGroup("Sales team", me, sim.Contact("4915100000002", "Alice"), sim.Contact("4915100000003", "Bob"))
	groups, err := r.Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].ID != g.JID().String() || groups[0].Subject != "Sales team" || groups[0].Participants != 3 {
		t.Errorf("groups %+v", groups)
	}
	// Item 8: the list is cached briefly; 50 more reads ask WhatsApp none.
	for range 50 {
		if again, err := r.Groups(context.Background()); err != nil || len(again) != 1 {
			t.Fatalf("again: %+v %v", again, err)
		}
	}
	if n := sim.GroupListQueries(); n != 1 {
		t.Errorf("51 reads of the groups asked WhatsApp %d times, want 1", n)
	}
}

// Neither database holds a SQLite header or the account number in the clear.
func TestDatabasesHoldNoPlaintext(t *testing.T) {
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	linkByQR(t, sim, r)
	r.stop()
	err := filepath.WalkDir(f.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, []byte("SQLite format 3")) || bytes.Contains(b, []byte(account)) {
			t.Errorf("%s holds plaintext", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWrongKeyIsRefused(t *testing.T) {
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	linkByQR(t, sim, r)
	r.stop()
	err := VerifyCredentials(context.Background(), filepath.Join(f.dir, "credentials", "session.db"), bytes.Repeat([]byte{8}, sqlite.MasterKeyLen))
	if !errors.Is(err, sqlite.ErrWrongKey) {
		t.Fatalf("wrong key: %v", err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, ok, "waiting for %s", what)
}

// CONNECT_JITTER: a restarted bridge connects after a random wait up to
// the jitter, so that bridges restarted together spread their connects.
func TestConnectJitterSpreadsRestarts(t *testing.T) {
	testutil.SkipIfShort(t, "restarts a linked bridge five times")
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	linkByQR(t, sim, r)
	r.stop()
	const jitter = time.Second
	var waits []time.Duration
	for range 5 {
		began := time.Now()
		r := start(t, sim, f, func(o *Options) { o.ConnectJitter = jitter })
		waitState(t, r.Session, "reconnected", isState(contract.StateConnected, contract.ReasonNone))
		waits = append(waits, time.Since(began))
		r.stop()
	}
	slices.Sort(waits)
	if spread := waits[len(waits)-1] - waits[0]; spread < 50*time.Millisecond {
		t.Errorf("five restarts connected within %s of each other (%v): no jitter", spread, waits)
	}
	t.Logf("time to connected of five restarts with a %s jitter: %v", jitter, waits)
}
