package wasim_test

import (
	"context"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// BenchmarkStartAndLink measures starting a simulator and linking a fresh
// whatsmeow client (SQLite store in a temp dir) by QR until it is logged in
// (events.Connected, after its first prekey upload of 812 keys).
func BenchmarkStartAndLink(b *testing.B) {
	for b.Loop() {
		sim, err := wasim.New(wasim.Options{})
		if err != nil {
			b.Fatal(err)
		}
		phone := sim.Phone("4915900000001")
		tc := linkByQRUntracked(b, sim, phone)
		tc.Disconnect()
		_ = sim.Close()
	}
}

// linkByQRUntracked is linkByQR for a benchmark loop: the client is
// disconnected by the caller rather than at cleanup.
func linkByQRUntracked(b *testing.B, sim *wasim.Simulator, phone *wasim.User) *testClient {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	tc := newTestClient(b, sim, newContainer(b).NewDevice())
	tc.skipDisconnect = true
	qr, err := tc.GetQRChannel(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := tc.Connect(); err != nil {
		b.Fatal(err)
	}
	item := <-qr
	if item.Event != whatsmeow.QRChannelEventCode {
		b.Fatalf("QR item %q", item.Event)
	}
	if _, err := phone.ScanQR(ctx, item.Code); err != nil {
		b.Fatal(err)
	}
	waitEvent[*events.Connected](b, tc, nil)
	return tc
}

// BenchmarkSendText measures 1:1 text messages through a real whatsmeow
// client to a contact whose phone decrypts each one; a message counts when
// SendMessage returned (server ack) and the contact has decrypted it.
func BenchmarkSendText(b *testing.B) {
	sim := wasim.Start(b)
	phone := sim.Phone("4915900000011")
	contact := sim.Contact("4915900000012", "Bench")
	contact.SetReceiptMode(wasim.ReceiptsNone)
	tc := linkByQR(b, sim, phone)
	ctx := context.Background()
	sendText(b, tc, contact.JID(), "warm up")
	start := time.Now()
	n := 0
	for b.Loop() {
		resp, err := tc.SendMessage(ctx, contact.JID(), textMessage("benchmark message"))
		if err != nil {
			b.Fatal(err)
		}
		waitMessage(b, contact, resp.ID)
		n++
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msgs/s")
}
