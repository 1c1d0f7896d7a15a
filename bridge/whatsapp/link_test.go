package whatsapp

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
)

// With WhatsApp unreachable, asking for a QR code fails at once as a
// connection failure, not as QR codes that expired (none was ever issued).
func TestQRWithWhatsAppUnreachable(t *testing.T) {
	sim := wasim.Start(t)
	server := &Server{HTTPClient: sim.HTTPClient(), RootKey: sim.RootPublicKey()}
	if err := sim.Close(); err != nil { // its port now refuses connections
		t.Fatal(err)
	}
	r := startWith(t, server, newBridgeFiles(t))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	qr, err := r.QR(ctx)
	took := time.Since(began)
	if e := bridge.ErrorOf(err); err == nil || e.Kind != bridge.KindUpstream || e.Code != "whatsapp_unreachable" {
		t.Fatalf("QR with WhatsApp unreachable: %q, %v", qr, err)
	}
	if took > 5*time.Second {
		t.Errorf("QR took %v to fail", took)
	}
	waitState(t, r.Session, "unpaired for the network", isState(contract.StateUnpaired, contract.ReasonNetwork))
	if cur := r.CurrentQR(); cur.Code != "" {
		t.Errorf("a QR code without a connection: %+v", cur)
	}
}
