package wasim_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// testKeepAlive is the heartbeat interval whose keepalive cadence the tests
// use: a ping every 2-3 s that fails after 1.5 s, so a ghost connection is
// noticed within about 4.5 s.
const testKeepAlive = 3 * time.Second

// The simulator replaces whatsmeow's root key, and the tests its keepalive
// timings, which must happen before any client goroutine starts.
func TestMain(m *testing.M) {
	wasim.Install()
	whatsapp.TuneKeepAlive(testKeepAlive)
	os.Exit(m.Run())
}

// waitTimeout bounds every wait; it is generous because the race detector
// and a busy machine slow SQLite and libsignal down a lot.
const waitTimeout = 20 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func clientLog() waLog.Logger {
	if os.Getenv("WASIM_CLIENT_LOG") != "" {
		return waLog.Stdout("client", os.Getenv("WASIM_CLIENT_LOG"), false)
	}
	return waLog.Noop
}

// newContainer opens a whatsmeow SQL store in a real SQLite file. whatsmeow
// needs foreign keys, and busy_timeout because it writes from several
// goroutines.
func newContainer(t testing.TB) *sqlstore.Container {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.db")
	dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	c, err := sqlstore.New(context.Background(), "sqlite3", dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testClient is an unmodified whatsmeow client wired to a simulator, with
// its events in a channel.
type testClient struct {
	*whatsmeow.Client
	events  chan any
	backlog []any // events seen but not yet matched; used by the test goroutine only
	// skipDisconnect leaves the client alone at cleanup (see
	// TestFaultServerClosesAfterStreamError).
	skipDisconnect bool
}

func newTestClient(t testing.TB, sim *wasim.Simulator, dev *store.Device) *testClient {
	t.Helper()
	return newTestClientWith(t, dev, sim.Wire)
}

// newTestClientWith is newTestClient with another way of wiring the client.
func newTestClientWith(t testing.TB, dev *store.Device, wire func(*whatsmeow.Client)) *testClient {
	t.Helper()
	cli := whatsmeow.NewClient(dev, clientLog())
	wire(cli)
	tc := &testClient{Client: cli, events: make(chan any, 4096)}
	cli.AddEventHandler(func(e any) {
		select {
		case tc.events <- e:
		default: // never block whatsmeow's event loop
		}
	})
	t.Cleanup(func() {
		if !tc.skipDisconnect {
			cli.Disconnect()
		}
	})
	return tc
}

// waitEvent returns the oldest event of type T that match accepts (nil
// accepts any) and removes it. Other events stay available to later waits,
// so the order in which a test waits does not have to be the order in which
// events arrive.
func waitEvent[T any](t testing.TB, tc *testClient, match func(T) bool) T {
	t.Helper()
	accept := func(e any) (T, bool) {
		v, ok := e.(T)
		return v, ok && (match == nil || match(v))
	}
	for i, e := range tc.backlog {
		if v, ok := accept(e); ok {
			tc.backlog = append(tc.backlog[:i], tc.backlog[i+1:]...)
			return v
		}
	}
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		select {
		case e := <-tc.events:
			if v, ok := accept(e); ok {
				return v
			}
			tc.backlog = append(tc.backlog, e)
		case <-timeout.C:
			var zero T
			t.Fatalf("timed out waiting for %T", zero)
			return zero
		}
	}
}

// linkByQR links a fresh client to phone by scanning its first QR code and
// waits until the client has logged in with its new credentials.
func linkByQR(t testing.TB, sim *wasim.Simulator, phone *wasim.User) *testClient {
	t.Helper()
	ctx := testContext(t)
	tc := newTestClient(t, sim, newContainer(t).NewDevice())
	qr, err := tc.GetQRChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.Connect(); err != nil {
		t.Fatal(err)
	}
	item := <-qr
	if item.Event != whatsmeow.QRChannelEventCode {
		t.Fatalf("first QR item is %q, want a code", item.Event)
	}
	if _, err := phone.ScanQR(ctx, item.Code); err != nil {
		t.Fatalf("ScanQR: %v", err)
	}
	waitEvent[*events.Connected](t, tc, nil)
	return tc
}
