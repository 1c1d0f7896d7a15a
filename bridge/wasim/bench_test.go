package wasim_test

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
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
		tc := wasimtest.LinkByQR(b, sim, phone)
		tc.SkipDisconnect = true // before sim.Close, not at the benchmark's end
		tc.Disconnect()
		_ = sim.Close()
	}
}

// BenchmarkSendText measures 1:1 text messages through a real whatsmeow
// client to a contact whose phone decrypts each one; a message counts when
// SendMessage returned (server ack) and the contact has decrypted it.
func BenchmarkSendText(b *testing.B) {
	sim := wasim.Start(b)
	phone := sim.Phone("4915900000011")
	contact := sim.Contact("4915900000012", "Bench")
	contact.SetReceiptMode(wasim.ReceiptsNone)
	tc := wasimtest.LinkByQR(b, sim, phone)
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
