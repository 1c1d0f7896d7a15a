package wasim

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/coder/websocket"

	"go.mau.fi/whatsmeow/socket"
)

// frameConn splits the WebSocket byte stream into WhatsApp frames: a 3-byte
// big-endian length and the payload. The client's first bytes are the
// connection header ("WA", magic, dictionary version), sent once.
//
// Frames may span WebSocket messages and a message may hold several frames,
// so reads go through a buffer; writes send one frame per message, as
// WhatsApp's servers do.
type frameConn struct {
	ws         *websocket.Conn
	buf        []byte
	headerSeen bool
}

// maxFrame is the largest payload a 3-byte length can announce.
const maxFrame = socket.FrameMaxSize - 1

var errBadHeader = errors.New("client did not start with the WhatsApp connection header")

func newFrameConn(ws *websocket.Conn) *frameConn {
	return &frameConn{ws: ws}
}

// readFrame returns the next complete frame payload.
func (fc *frameConn) readFrame(ctx context.Context) ([]byte, error) {
	for {
		if frame, ok, err := fc.takeFrame(); err != nil || ok {
			return frame, err
		}
		typ, data, err := fc.ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		if typ != websocket.MessageBinary {
			return nil, fmt.Errorf("unexpected websocket message type %v", typ)
		}
		fc.buf = append(fc.buf, data...)
	}
}

// takeFrame removes one complete frame from the buffer, if there is one.
func (fc *frameConn) takeFrame() ([]byte, bool, error) {
	if !fc.headerSeen {
		n := len(socket.WAConnHeader)
		if len(fc.buf) < n {
			return nil, false, nil
		}
		if !bytes.Equal(fc.buf[:n], socket.WAConnHeader) {
			return nil, false, errBadHeader
		}
		fc.buf = fc.buf[n:]
		fc.headerSeen = true
	}
	if len(fc.buf) < socket.FrameLengthSize {
		return nil, false, nil
	}
	size := int(fc.buf[0])<<16 | int(fc.buf[1])<<8 | int(fc.buf[2])
	if len(fc.buf) < socket.FrameLengthSize+size {
		return nil, false, nil
	}
	frame := bytes.Clone(fc.buf[socket.FrameLengthSize : socket.FrameLengthSize+size])
	fc.buf = fc.buf[socket.FrameLengthSize+size:]
	return frame, true, nil
}

// writeFrame sends payload as one frame in one binary WebSocket message.
func (fc *frameConn) writeFrame(ctx context.Context, payload []byte) error {
	if len(payload) > maxFrame {
		return fmt.Errorf("frame of %d bytes is too large", len(payload))
	}
	msg := make([]byte, socket.FrameLengthSize+len(payload))
	msg[0], msg[1], msg[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	copy(msg[socket.FrameLengthSize:], payload)
	return fc.ws.Write(ctx, websocket.MessageBinary, msg)
}
