package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// unlinkedAccount is the account token of a subject while no phone is
// linked.
const unlinkedAccount = "unlinked"

// natsSender publishes to a JetStream stream. An attempt counts as
// delivered only after the stream's PubAck; the Nats-Msg-Id header is the
// webhook-id, so that the stream drops a repeat of an attempt whose
// PubAck was lost (within the stream's duplicate window).
type natsSender struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	prefix  string
	account func() string
}

// natsOptions are the connection's options for s: its credentials, and a
// connection that keeps reconnecting for ever without a reconnect buffer,
// so that a publish while the server is down fails at once and is retried
// from the outbox instead of waiting in memory.
func natsOptions(s Subscription, dialer nats.CustomDialer) []nats.Option {
	opts := []nats.Option{
		nats.Name("msgbridge subscription " + s.ID), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.ReconnectBufSize(-1), nats.Timeout(probeTimeout), nats.SetCustomDialer(dialer),
	}
	switch c := s.Credentials; {
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	case c.User != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	}
	return opts
}

// natsServer is the server URL of a nats:// target: scheme and host.
func natsServer(u *url.URL) string { return "nats://" + u.Host }

func (o *Outbox) newNATSSender(s Subscription, u *url.URL) (sender, error) {
	prefix, err := subjectPrefix(u)
	if err != nil {
		return nil, err
	}
	// The server may be down now: the connection comes up when it does,
	// and then the backlog goes at once, not each event at the end of its
	// own back-off.
	answers := func(*nats.Conn) { o.targetAnswers(s.ID) }
	nc, err := nats.Connect(natsServer(u), append(natsOptions(s, o.dialer()), nats.RetryOnFailedConnect(true),
		nats.ConnectHandler(answers), nats.ReconnectHandler(answers))...)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats: %w", err)
	}
	account := o.opts.Account
	if account == nil {
		account = func() string { return "" }
	}
	return &natsSender{nc: nc, js: js, prefix: prefix, account: account}, nil
}

func (n *natsSender) close() { n.nc.Close() }

// wakeBacklog makes a subscription's pending events due now.
const wakeBacklog = `UPDATE webhook_outbox SET next_attempt_at = ?
	WHERE subscription = ? AND status = 'pending' AND next_attempt_at > ?`

// targetAnswers is told that subscription id's target answers again (its
// NATS connection came back): its events waiting out their back-off are
// made due and the dispatcher woken. The back-off spares a target that is
// down; one that is up has nothing to be spared.
func (o *Outbox) targetAnswers(id string) {
	ctx := context.Background()
	now := o.opts.Now().UnixMilli()
	err := o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := o.stmts.Exec(ctx, tx, wakeBacklog, now, id, now)
		return err
	})
	if err != nil {
		// Shutting down, or the database failing: the events keep their
		// back-off, as before.
		o.opts.Log.V(1).Info("could not wake a subscription's backlog", "subscription", id, "error", err.Error())
		return
	}
	o.wake.Notify()
}

// subject is <prefix>.<account>.<event type>: the linked phone's digits,
// or unlinked, when the event is delivered.
func (n *natsSender) subject(eventType string) string {
	account := n.account()
	if account == "" {
		account = unlinkedAccount
	}
	return n.prefix + "." + account + "." + eventType
}

func (n *natsSender) send(ctx context.Context, l *live, ev Stored, at time.Time) (answer, error) {
	body, header, err := l.format.Encode(ev)
	if err != nil {
		return answer{}, fmt.Errorf("encode %s: %w", l.Format, err)
	}
	h := http.Header{}
	for k, v := range l.Headers {
		h.Set(k, v)
	}
	for k, v := range header {
		h[k] = v
	}
	l.format.Sign(h, l.Secret, ev.ID, at, body)
	msg := nats.NewMsg(n.subject(ev.Type))
	msg.Data = body
	for k, v := range h {
		msg.Header[strings.ToLower(k)] = v // NATS headers are case-sensitive: the Standard Webhooks spelling
	}
	msg.Header.Set(jetstream.MsgIDHeader, ev.ID)
	if _, err := n.js.PublishMsg(ctx, msg); err != nil {
		return answer{}, fmt.Errorf("nats publish to %s: %w", msg.Subject, err)
	}
	return answer{status: http.StatusOK}, nil // the PubAck: stored in the stream
}

// probeNATS connects with s's credentials and looks up the stream that
// takes the target's subjects.
func probeNATS(ctx context.Context, s Subscription, u *url.URL, dialer nats.CustomDialer) error {
	prefix, err := subjectPrefix(u)
	if err != nil {
		return err
	}
	nc, err := nats.Connect(natsServer(u), natsOptions(s, dialer)...)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if _, err := js.StreamNameBySubject(ctx, prefix+".>"); err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return probeRefusal{fmt.Sprintf("no JetStream stream takes %s.>: create one first", prefix)}
		}
		return err
	}
	return nil
}
