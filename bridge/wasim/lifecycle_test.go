package wasim_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Close ends every connection, including a logged-in client and a socket
// stuck in the handshake, and waits for all of the simulator's goroutines.
// Not parallel: it inspects every goroutine of the process.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the WhatsApp simulator")
	}
	sim, err := wasim.New(wasim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	phone := sim.Phone("4915700000001")
	tc := wasimtest.LinkByQR(t, sim, phone)

	// A client that opens the WebSocket and then says nothing.
	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()
	stuck, resp, err := websocket.Dial(ctx, "wss://web.whatsapp.com/ws/chat", &websocket.DialOptions{HTTPClient: sim.HTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body != nil { // a 101 Switching Protocols response has none
		_ = resp.Body.Close()
	}
	defer func() { _ = stuck.CloseNow() }()

	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.Disconnected](t, tc, nil)
	// Close has waited for every handler's Done; a handler may still be on
	// its way out of its last line, so look until none is left (a leaked
	// one stays until the deadline).
	var left []string
	if !testutil.Wait(wasimtest.WaitTimeout, func() bool { left = simulatorGoroutines(); return len(left) == 0 }) {
		t.Fatalf("goroutines left after Close:\n%s", strings.Join(left, "\n\n"))
	}
	// The listener is gone.
	if c, err := net.Dial("tcp", sim.Addr()); err == nil {
		c.Close()
		t.Error("listener still accepts after Close")
	}
	if err := sim.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// simulatorGoroutines are the stacks of the goroutines running the
// simulator's code.
func simulatorGoroutines() []string {
	buf := make([]byte, 1<<20)
	var left []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "msgbridge/bridge/wasim.") {
			left = append(left, g)
		}
	}
	return left
}
