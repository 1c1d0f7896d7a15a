package whatsapp

import (
	"context"
	"fmt"
	"os"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// Kinds of outgoing message.
const (
	KindText     = "text"
	KindImage    = "image"
	KindDocument = "document"
)

// Outgoing is one message to send.
type Outgoing struct {
	// ID is the WhatsApp message ID, chosen before the first attempt so that
	// a resend after a crash is the same message to WhatsApp and the phone.
	ID        string
	Recipient string // a JID: <digits>@s.whatsapp.net or <id>@g.us
	Kind      string
	Text      string // the body of a text, the caption of media
	// For media: the spooled file, its name and sniffed type.
	FilePath string
	FileName string
	MimeType string
}

// NewMessageID returns a fresh WhatsApp message ID in the form WhatsApp Web
// uses.
func (m *Manager) NewMessageID() string {
	return m.client.Load().GenerateMessageID()
}

// Ready reports whether Send can send now: logged in, and connected by the
// state machine's account, which a failed keepalive leaves at once (a send
// on a ghost connection would wait for an ack that never comes).
func (m *Manager) Ready() bool {
	return m.client.Load().IsLoggedIn() && m.Status().Connected()
}

// Send sends out through the linked account. It fails with ErrNotLinked
// while no session is logged in, so the send queue retries it later.
func (m *Manager) Send(ctx context.Context, out Outgoing) error {
	if !m.Ready() {
		return ErrNotLinked
	}
	cli := m.client.Load()
	to, err := types.ParseJID(out.Recipient)
	if err != nil || to.User == "" {
		return fmt.Errorf("recipient %q is not a JID", out.Recipient)
	}
	msg, err := m.buildMessage(ctx, cli, out)
	if err != nil {
		return err
	}
	_, err = cli.SendMessage(ctx, to, msg, whatsmeow.SendRequestExtra{ID: out.ID})
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

func (m *Manager) buildMessage(ctx context.Context, cli *whatsmeow.Client, out Outgoing) (*waE2E.Message, error) {
	switch out.Kind {
	case KindText:
		return &waE2E.Message{Conversation: proto.String(out.Text)}, nil
	case KindImage:
		up, err := m.upload(ctx, cli, out.FilePath, whatsmeow.MediaImage)
		if err != nil {
			return nil, err
		}
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			Mimetype: proto.String(out.MimeType), FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256,
			FileLength: proto.Uint64(up.FileLength), Caption: optional(out.Text),
		}}, nil
	case KindDocument:
		up, err := m.upload(ctx, cli, out.FilePath, whatsmeow.MediaDocument)
		if err != nil {
			return nil, err
		}
		return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			Mimetype: proto.String(out.MimeType), FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256,
			FileLength: proto.Uint64(up.FileLength), FileName: proto.String(out.FileName),
			Title: proto.String(out.FileName), Caption: optional(out.Text),
		}}, nil
	}
	return nil, fmt.Errorf("unknown message kind %q", out.Kind)
}

// upload encrypts and uploads the file at path, streaming it: whatsmeow
// needs a scratch file for the ciphertext, which goes next to the spooled
// plaintext (DATA_DIR/spool) because a pod's root filesystem is read-only.
func (m *Manager) upload(ctx context.Context, cli *whatsmeow.Client, path string, kind whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	f, err := os.Open(path) //nolint:gosec // a spool path the bridge created
	if err != nil {
		return whatsmeow.UploadResponse{}, fmt.Errorf("open attachment: %w", err)
	}
	defer func() { _ = f.Close() }()
	scratch, err := os.CreateTemp(m.opts.SpoolDir, "upload-*")
	if err != nil {
		return whatsmeow.UploadResponse{}, fmt.Errorf("upload scratch file: %w", err)
	}
	defer func() {
		_ = scratch.Close()
		_ = os.Remove(scratch.Name())
	}()
	up, err := cli.UploadReader(ctx, f, scratch, kind)
	if err != nil {
		return whatsmeow.UploadResponse{}, fmt.Errorf("upload: %w", err)
	}
	return up, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return proto.String(s)
}
