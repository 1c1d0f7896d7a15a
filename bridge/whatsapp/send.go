package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// minSendTimeout is the least time a send may wait for WhatsApp.
const minSendTimeout = 2 * time.Second

// errLinkDown cancels a send whose link left connected; it is a
// bridge.ErrNotLinked, which the send queue retries.
var errLinkDown = &bridge.Error{
	Kind: bridge.ErrNotLinked.Kind, Code: bridge.ErrNotLinked.Code,
	Message: "the link to WhatsApp went down during the send",
}

// errSendTimeout ends a send WhatsApp did not confirm in time.
var errSendTimeout = bridge.Errorf(bridge.KindTimeout, bridge.CodeWhatsAppTimeout, "WhatsApp did not confirm the message in time")

// NewMessageID returns a fresh WhatsApp message ID in the form WhatsApp Web
// uses.
func (m *Session) NewMessageID() string {
	return m.client.Load().GenerateMessageID()
}

// Ready reports whether Send can send now: logged in, and connected by the
// state machine's account, which a failed keepalive leaves at once (a send
// on a ghost connection would wait for an ack that never comes).
func (m *Session) Ready() bool {
	return m.client.Load().IsLoggedIn() && m.Status().Connected()
}

// Send sends out through the linked account. It fails with
// bridge.ErrNotLinked while no session is logged in, so the send queue
// retries it later. It never waits on a dead link: it ends the moment the
// status leaves connected, and WhatsApp's confirmation is awaited for two
// heartbeat intervals (at least 2 s; whatsmeow's own limit is 75 s). The upload of an
// attachment goes to the media servers over HTTP and is not timed here,
// since a large file on a slow network takes long; the caller bounds it.
func (m *Session) Send(ctx context.Context, out bridge.Outgoing) error {
	if !m.Ready() {
		return bridge.ErrNotLinked
	}
	cli := m.client.Load()
	to, err := types.ParseJID(out.Recipient.JID())
	if err != nil || to.User == "" {
		return bridge.ErrInvalidRecipient
	}
	ctx, stop := m.whileConnected(ctx)
	defer stop()
	msg, handle, err := m.outgoingMessage(ctx, cli, out)
	if err != nil {
		return sendFailed(ctx, err)
	}
	if err := m.showTyping(ctx, cli, to, out); err != nil {
		return sendFailed(ctx, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	extra := whatsmeow.SendRequestExtra{ID: out.ID, StatusRecipients: statusRecipients(out.Status), MediaHandle: handle}
	if out.Type == bridge.TypeButtons {
		extra.AdditionalNodes = &[]waBinary.Node{bizNode(time.Now())}
	}
	if _, err := cli.SendMessage(ctx, to, msg, extra); err != nil {
		return m.restrictIfRefused(sendFailed(ctx, fmt.Errorf("send: %w", err)))
	}
	// session.db commits without an fsync each (sqlite.OpenSyncedByCaller):
	// the send's step of the chat's ratchet is made durable at once, so that
	// a power loss cannot make a later send repeat its key. Sends are paced,
	// so one fsync each costs nothing a user feels.
	if err := m.acks.sync(); err != nil {
		m.log.Error(err, "sync session.db after a send")
	}
	m.restrict.sent()
	return nil
}

// sendTimeout is how long a send waits for WhatsApp: two heartbeat
// intervals, in which the keepalive notices a dead link anyway.
func (m *Session) sendTimeout() time.Duration {
	return max(2*m.opts.HeartbeatInterval, minSendTimeout)
}

// whileConnected returns ctx, cancelled with errLinkDown as soon as the
// status leaves connected (a keepalive timeout, a dropped socket, a logout).
func (m *Session) whileConnected(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	changes, unsubscribe := m.Subscribe() // before the first look: no change is missed
	go func() {
		defer unsubscribe()
		for m.Status().Connected() {
			select {
			case <-changes:
			case <-ctx.Done():
				return
			}
		}
		cancel(errLinkDown)
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// sendFailed says why a send failed: the link went down, WhatsApp did not
// answer in time, or err itself.
func sendFailed(ctx context.Context, err error) error {
	if why, ok := errors.AsType[*bridge.Error](context.Cause(ctx)); ok && (why == errLinkDown || why == errSendTimeout) {
		e := *why
		e.Err = err
		return &e
	}
	return err
}

// outgoingMessage is the whatsmeow message of out and, for a channel
// post's attachment, its upload's handle.
func (m *Session) outgoingMessage(ctx context.Context, cli *whatsmeow.Client, out bridge.Outgoing) (*waE2E.Message, string, error) {
	if out.Recipient.Kind == bridge.RecipientChannel {
		return m.channelContent(ctx, cli, out)
	}
	msg, err := m.buildMessage(ctx, cli, out)
	return msg, "", err
}

// buildMessage is the whatsmeow message of out: its type's content, then
// the reply and mentions around it.
func (m *Session) buildMessage(ctx context.Context, cli *whatsmeow.Client, out bridge.Outgoing) (*waE2E.Message, error) {
	msg, err := m.content(ctx, cli, out)
	if err != nil {
		return nil, err
	}
	info, err := m.contextInfo(ctx, cli, out)
	if err != nil || info == nil {
		return msg, err
	}
	return withContext(msg, info), nil
}

// content builds the message of out's type: one small builder per type.
// Types that act on an earlier message add their case here.
func (m *Session) content(ctx context.Context, cli *whatsmeow.Client, out bridge.Outgoing) (*waE2E.Message, error) {
	kind, ok := out.Type.Kind()
	switch {
	case !ok:
	case kind.Action:
		return buildAction(cli, out)
	case kind.Part == bridge.PartFile:
		up, err := m.upload(ctx, cli, out.FilePath, mediaKinds[out.Type])
		if err != nil {
			return nil, err
		}
		return mediaMessage(out, up), nil
	case kind.Part == bridge.PartLocation:
		return locationMessage(out)
	case kind.Part == bridge.PartContact:
		return contactMessage(out)
	case kind.Part == bridge.PartPoll:
		return pollMessage(cli, out)
	case kind.Part == bridge.PartButtons:
		return buttonsMessage(out)
	case out.Status != nil:
		return statusText(out), nil
	default:
		return &waE2E.Message{Conversation: proto.String(out.Text)}, nil
	}
	return nil, bridge.Invalid(bridge.CodeInvalidType, "unknown message type %q", out.Type)
}

// upload encrypts and uploads the file at path, streaming it: whatsmeow
// needs a scratch file for the ciphertext, which goes next to the spooled
// plaintext (DATA_DIR/spool) because a pod's root filesystem is read-only.
func (m *Session) upload(ctx context.Context, cli *whatsmeow.Client, path string, kind whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
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
