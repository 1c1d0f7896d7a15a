package wasim

import (
	"bytes"
	"context"
	"testing"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/socket"
)

// FuzzFrames feeds arbitrary client bytes to the frame splitter: it must
// never panic, and whatever it returns must be what the length prefixes say.
func FuzzFrames(f *testing.F) {
	f.Add(append(bytes.Clone(socket.WAConnHeader), 0, 0, 3, 'a', 'b', 'c'))
	f.Add([]byte("GET / HTTP/1.1"))
	f.Add(append(bytes.Clone(socket.WAConnHeader), 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := &frameConn{buf: bytes.Clone(data)}
		consumed := len(socket.WAConnHeader)
		for range 64 {
			frame, ok, err := fc.takeFrame()
			if err != nil || !ok {
				return
			}
			consumed += socket.FrameLengthSize + len(frame)
			if !bytes.Equal(frame, data[consumed-len(frame):consumed]) {
				t.Fatalf("frame does not match the input at %d", consumed)
			}
		}
	})
}

// FuzzClientNodes checks that the parsers of client nodes return errors
// instead of panicking on malformed prekey uploads and QR strings.
func FuzzClientNodes(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4}, []byte("id"), "ref,AAAA,BBBB,CCCC")
	f.Add(make([]byte, 32), make([]byte, 3), "")
	sim, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = sim.Close() })
	u := sim.Phone("491700000000")
	f.Fuzz(func(t *testing.T, a, b []byte, qr string) {
		iq := &waBinary.Node{Tag: "iq", Content: []waBinary.Node{
			{Tag: "registration", Content: a},
			{Tag: "identity", Content: b},
			{Tag: "list", Content: []waBinary.Node{{Tag: "key", Content: []waBinary.Node{{Tag: "id", Content: b}, {Tag: "value", Content: a}}}}},
			{Tag: "skey", Content: []waBinary.Node{{Tag: "id", Content: a}, {Tag: "value", Content: b}, {Tag: "signature", Content: a}}},
		}}
		if _, err := parseKeyUpload(iq); err == nil && len(a) != 4 {
			t.Fatal("accepted a registration id that is not 4 bytes")
		}
		if _, err := u.ScanQR(context.Background(), qr); err == nil {
			t.Fatal("a random QR linked a device")
		}
	})
}
