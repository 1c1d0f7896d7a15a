// Package wasim is a WhatsApp network simulator that the unmodified whatsmeow
// client connects to. It is test infrastructure: tests import it directly and
// the standalone process (cmd/wasim) serves it to a bridge built with the
// `wasim` build tag. The production bridge never links it.
//
// The simulator speaks the real protocol: a TLS WebSocket carrying the Noise
// XX handshake (its certificate chain is signed by a root key that replaces
// whatsmeow.WACertPubKey), then WhatsApp's binary XML nodes. Simulated users
// ([User]) have phones with real Signal identities (go.mau.fi/libsignal):
// they link whatsmeow clients as companion devices by QR code or pairing
// code, exchange end-to-end encrypted messages with them (1:1 and groups with
// sender keys), send receipts, and share media over HTTPS. Faults (ghost
// connections, dropped sockets, stream replaced, logged out, temporary bans,
// outdated client, failing sends, slow answers) are injected on command.
//
// # Globals
//
// whatsmeow reads its root key and keepalive timings from package variables
// without locking, so they must be set before any client goroutine starts.
// Call [Install] (the root key) in TestMain (Start also calls it, which is
// safe as long as no whatsmeow client of another test is already running);
// the keepalive timings have one writer, whatsapp.TuneKeepAlive, which a test
// that needs a ghost connection noticed in seconds calls:
//
//	func TestMain(m *testing.M) {
//		wasim.Install()
//		whatsapp.TuneKeepAlive(3 * time.Second)
//		os.Exit(m.Run())
//	}
//
// # Typical test
//
//	sim := wasim.Start(t)
//	cli := whatsmeow.NewClient(container.NewDevice(), nil)
//	sim.Wire(cli)
//	qr, _ := cli.GetQRChannel(ctx)
//	_ = cli.Connect()
//	phone := sim.Phone("4915100000001")
//	_, err := phone.ScanQR(ctx, (<-qr).Code)
//	alice := sim.Contact("4915100000002", "Alice")
//	resp, err := cli.SendMessage(ctx, alice.JID(), &waE2E.Message{Conversation: proto.String("hi")})
//	msg, err := alice.WaitMessage(ctx, resp.ID)
//
// See README.md for the HTTP control API of the standalone process.
package wasim
