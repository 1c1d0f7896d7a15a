// Package wasimtest holds what tests do against the simulator again and
// again: run an unmodified whatsmeow client on a real SQLite store, wait for
// its events, and link it, or a bridge, to a simulated phone by QR code.
//
// whatsmeow clients need the simulator's root key and timings: a package
// whose tests create them calls wasim.Install in its TestMain.
package wasimtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver" // the "sqlite3" driver of the whatsmeow store

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
)

// WaitTimeout bounds every wait; it is generous because the race detector
// and a busy machine slow SQLite and libsignal down a lot.
const WaitTimeout = 20 * time.Second

// Context is a context for one test's calls to clients and phones, ended at
// cleanup and after twice WaitTimeout at the latest.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*WaitTimeout)
	tb.Cleanup(cancel)
	return ctx
}

// clientLog is silent unless WASIM_CLIENT_LOG names a whatsmeow log level.
func clientLog() waLog.Logger {
	if level := os.Getenv("WASIM_CLIENT_LOG"); level != "" {
		return waLog.Stdout("client", level, false)
	}
	return waLog.Noop
}

// NewContainer opens a whatsmeow SQL store in a real SQLite file in tb's
// temp dir. whatsmeow needs foreign keys, and busy_timeout because it
// writes from several goroutines.
func NewContainer(tb testing.TB) *sqlstore.Container {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "session.db")
	dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	c, err := sqlstore.New(context.Background(), "sqlite3", dsn, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Client is an unmodified whatsmeow client wired to a simulator, with its
// events kept for WaitEvent.
type Client struct {
	*whatsmeow.Client
	events  chan any
	backlog []any // events seen but not yet matched; used by the test goroutine only
	// SkipDisconnect leaves the client alone at cleanup, for a test that
	// disconnects it itself or whose simulator has cut it off for good.
	SkipDisconnect bool
	settle         func() // before the disconnect at cleanup, when set
}

// NewClient wires a client on dev to sim; it is disconnected at cleanup,
// once it has acknowledged what sim wrote to it.
func NewClient(tb testing.TB, sim *wasim.Simulator, dev *store.Device) *Client {
	tb.Helper()
	c := NewClientWith(tb, dev, sim.Wire)
	c.settle = func() { Settle(tb, sim) }
	return c
}

// settleTimeout bounds Settle: a client that refused a stanza (its event
// handler failed) never acknowledges it.
const settleTimeout = 2 * time.Second

// Settle waits (up to settleTimeout) until the clients connected to sim
// have acknowledged what it wrote to them; see Simulator.WaitAcked for why
// a test does so before it disconnects one. It logs what was left.
func Settle(tb testing.TB, sim *wasim.Simulator) {
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	if err := sim.WaitAcked(ctx); err != nil {
		tb.Logf("disconnecting anyway: %v", err)
	}
}

// NewClientWith is NewClient with another way of wiring the client, such as
// wasimclient.Configure for a simulator in another process.
func NewClientWith(tb testing.TB, dev *store.Device, wire func(*whatsmeow.Client)) *Client {
	tb.Helper()
	cli := whatsmeow.NewClient(dev, clientLog())
	wire(cli)
	c := &Client{Client: cli, events: make(chan any, 4096)}
	cli.AddEventHandler(func(e any) {
		select {
		case c.events <- e:
		default: // never block whatsmeow's event loop
		}
	})
	tb.Cleanup(func() {
		if c.SkipDisconnect {
			return
		}
		if c.settle != nil {
			c.settle()
		}
		cli.Disconnect()
	})
	return c
}

// WaitEvent returns the oldest event of type T that match accepts (nil
// accepts any) and removes it. Other events stay available to later waits,
// so the order in which a test waits does not have to be the order in which
// events arrive. It fails tb after WaitTimeout.
func WaitEvent[T any](tb testing.TB, c *Client, match func(T) bool) T {
	tb.Helper()
	accept := func(e any) (T, bool) {
		v, ok := e.(T)
		return v, ok && (match == nil || match(v))
	}
	for i, e := range c.backlog {
		if v, ok := accept(e); ok {
			c.backlog = append(c.backlog[:i], c.backlog[i+1:]...)
			return v
		}
	}
	timeout := time.NewTimer(WaitTimeout)
	defer timeout.Stop()
	for {
		select {
		case e := <-c.events:
			if v, ok := accept(e); ok {
				return v
			}
			c.backlog = append(c.backlog, e)
		case <-timeout.C:
			var zero T
			tb.Fatalf("timed out waiting for %T", zero)
			return zero
		}
	}
}

// ConnectForQR connects a client that has no credentials yet and returns
// the first item of its QR channel (a code, once the socket is ready) and
// the channel, which tells later how the pairing ended.
func ConnectForQR(tb testing.TB, ctx context.Context, c *Client) (whatsmeow.QRChannelItem, <-chan whatsmeow.QRChannelItem) {
	tb.Helper()
	qr, err := c.GetQRChannel(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Connect(); err != nil {
		tb.Fatal(err)
	}
	select {
	case item := <-qr:
		return item, qr
	case <-time.After(WaitTimeout):
		tb.Fatal("no QR item from the simulator")
		return whatsmeow.QRChannelItem{}, nil
	}
}

// LinkByQR links a fresh client to phone by scanning its first QR code and
// waits until the client has logged in with its new credentials.
func LinkByQR(tb testing.TB, sim *wasim.Simulator, phone *wasim.User) *Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	c := NewClient(tb, sim, NewContainer(tb).NewDevice())
	item, _ := ConnectForQR(tb, ctx, c)
	if item.Event != whatsmeow.QRChannelEventCode {
		tb.Fatalf("first QR item is %q, want a code", item.Event)
	}
	Scan(tb, phone, item.Code)
	WaitEvent[*events.Connected](tb, c, nil)
	return c
}

// Scan scans qr with phone, as its user would, and returns the device it
// linked; it fails tb when the simulator refuses the code.
func Scan(tb testing.TB, phone *wasim.User, qr string) types.JID {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	dev, err := phone.ScanQR(ctx, qr)
	if err != nil {
		tb.Fatalf("ScanQR: %v", err)
	}
	return dev
}

// BridgeQR fetches the QR code a bridge at base (http://host:port) shows
// for linking, with its admin token.
func BridgeQR(tb testing.TB, base, adminToken string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/session/qr", nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set(contract.AdminTokenHeader, adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	var qr struct{ QR string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &qr) != nil || qr.QR == "" {
		tb.Fatalf("GET %s/session/qr: %d %s", base, resp.StatusCode, body)
	}
	return qr.QR
}

// LinkBridge links the bridge at base to phone: the phone scans the QR code
// the bridge shows. The caller waits for the bridge to say connected in the
// way it observes the bridge.
func LinkBridge(tb testing.TB, phone *wasim.User, base, adminToken string) {
	tb.Helper()
	Scan(tb, phone, BridgeQR(tb, base, adminToken))
}
