package httpapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// smallBuffer is the kernel buffer size, in bytes, of the slow reader's
// connection at both ends: its stream fills them after a few kilobytes,
// not after megabytes.
const smallBuffer = 4096

// smallSendBuffers shrinks the send buffer of every connection the server
// accepts.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetWriteBuffer(smallBuffer); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, err
}

// shrinkReceiveBuffer sets a socket's receive buffer before it connects,
// so that the window it announces stays small.
func shrinkReceiveBuffer(_, _ string, raw syscall.RawConn) error {
	var err error
	if cerr := raw.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, smallBuffer) //nolint:gosec // a socket's fd fits an int
	}); cerr != nil {
		return cerr
	}
	return err
}

// openStalledStream opens a stream through a socket with a small receive
// buffer and reads nothing of it; it returns the body, for the test to read
// when it wants, and the client's address as the server sees it.
func openStalledStream(t *testing.T, url string) (io.ReadCloser, string) {
	t.Helper()
	dialer := &net.Dialer{Control: shrinkReceiveBuffer}
	local := make(chan string, 1)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			local <- c.LocalAddr().String()
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", testAPIKey)
	resp, err := (&http.Client{Transport: tr}).Do(req) //nolint:bodyclose // closed at the test's end
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	return resp.Body, <-local
}

// A client that stops reading is cut once a write to it waited
// EventsWriteTimeout, and finds its stream ended when it reads again
// (short of the last event: it resumes with Last-Event-ID). Meanwhile
// another client of the same bridge gets every event, before the cut and
// after it: a slow reader holds its own stream, never the bridge.
func TestEventStreamCutsASlowReader(t *testing.T) {
	e := newSubsEnv(t)
	srv := newUnstartedTestServer(t, testDeps{Events: e.outbox, EventsWriteTimeout: 200 * time.Millisecond, Messages: &fakeMessages{}})
	srv.Listener = smallSendBuffers{srv.Listener}
	closed := make(chan string, 64)
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case closed <- c.RemoteAddr().String():
			default: // never hold the server
			}
		}
	}
	srv.Start()
	stalled, stalledAddr := openStalledStream(t, srv.URL+"/api/events")
	fast := openStream(t, srv.URL+"/api/events", "")
	const n = 400 // about 60 kB of events: many times what the small buffers hold
	e.emit(t, n, 0)
	for range n {
		fast.next(t)
	}
	testutil.Receive(t, 10*time.Second, closed, func(addr string) bool { return addr == stalledAddr }, "the slow reader's stream cut")
	e.emit(t, 10, n)
	for range 10 {
		fast.next(t)
	}
	got, _ := io.ReadAll(stalled) // the server closed it: an unexpected EOF ends what arrived
	if sent := strings.Count(string(got), "\nevent: "); sent == 0 || sent >= n {
		t.Errorf("the slow reader got %d of %d events before its stream ended, want some but not all", sent, n)
	}
}
