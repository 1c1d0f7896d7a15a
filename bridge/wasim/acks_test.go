package wasim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// WaitAcked returns once the client has answered what was written to it,
// and names what a client refused to acknowledge.
func TestWaitAcked(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915500000071")
	gina := sim.Contact("4915500000072", "Gina")
	tc := wasimtest.LinkByQR(t, sim, phone)
	tc.SynchronousAck = true
	tc.AddEventHandlerWithSuccessStatus(func(e any) bool {
		m, ok := e.(*events.Message)
		return !ok || m.Message.GetConversation() != "not now"
	})
	ctx := wasimtest.Context(t)

	id, err := gina.SendText(ctx, phone.JID(), "hello")
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.WaitAcked(ctx); err != nil {
		t.Fatal(err)
	}
	ticked, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := gina.WaitTick(ticked, id, types.ReceiptTypeDelivered); err != nil {
		t.Fatalf("acknowledged without the delivery receipt: %v", err)
	}

	refused, err := gina.SendText(ctx, phone.JID(), "not now")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err = sim.WaitAcked(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "message/"+refused) {
		t.Fatalf("a refused message: %v", err)
	}
	tc.SkipDisconnect = true // settling would wait for the refused message
	tc.Disconnect()
}
