package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqpSender publishes to a RabbitMQ topic exchange. An attempt counts as
// delivered only after the broker's publisher confirm (an ack: the
// message is routed to at least one queue and, a persistent message on a
// durable queue, written to disk); a nack, a return (no queue is bound for
// the routing key), a lost channel or connection is a failed attempt,
// which the outbox retries in the chat's order. The message id is the
// webhook-id, the same on every attempt, so that a consumer drops the
// repeat of an attempt whose confirm was lost.
//
// Each channel carries one publish at a time: a return then belongs to
// the publish in flight, and arrives (the client dispatches a channel's
// frames in order) before that publish's confirm.
type amqpSender struct {
	o       *Outbox
	id      string
	target  amqpTarget
	creds   Credentials
	account func() string

	mu        sync.Mutex
	conn      *amqp.Connection
	idle      []*amqpChannel
	redialing bool
	closed    bool
}

// amqpChannel is a channel in confirm mode with its returns.
type amqpChannel struct {
	ch      *amqp.Channel
	returns chan amqp.Return
}

// amqpRedialEvery is how often a lost broker is dialled again, so that its
// backlog goes as soon as it answers.
const amqpRedialEvery = time.Second

var errAMQPClosed = errors.New("amqp: the subscription was changed or removed")

func (o *Outbox) newAMQPSender(s Subscription, u *url.URL) (sender, error) {
	t, err := parseAMQPTarget(u)
	if err != nil {
		return nil, err
	}
	account := o.opts.Account
	if account == nil {
		account = func() string { return "" }
	}
	a := &amqpSender{o: o, id: s.ID, target: t, creds: s.Credentials, account: account}
	// The broker may be down now: the first delivery or the redial loop
	// connects when it answers.
	return a, nil
}

// amqpConfig is the client's configuration for t with creds: the vhost
// and credentials given here, never in a URL; every connection through
// dialer (which refuses local addresses unless allowed).
func amqpConfig(t amqpTarget, creds Credentials, dialer *net.Dialer) amqp.Config {
	cfg := amqp.Config{
		Vhost:      t.vhost,
		Properties: amqp.Table{"connection_name": "msgbridge"},
		Dial: func(network, addr string) (net.Conn, error) {
			conn, err := dialer.Dial(network, addr)
			if err != nil {
				return nil, err
			}
			// The handshake is bounded as the client's own dialer bounds
			// it; the client clears the deadline once it is open.
			return conn, conn.SetDeadline(time.Now().Add(probeTimeout))
		},
	}
	if creds.User != "" {
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: creds.User, Password: creds.Password}}
	} else {
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: "guest", Password: "guest"}}
	}
	return cfg
}

// dialAMQP connects to t and declares its exchange: durable, topic.
func dialAMQP(t amqpTarget, creds Credentials, dialer *net.Dialer) (*amqp.Connection, error) {
	conn, err := amqp.DialConfig(t.brokerURL(), amqpConfig(t, creds, dialer))
	if err != nil {
		return nil, fmt.Errorf("amqp: %w", err)
	}
	ch, err := conn.Channel()
	if err == nil {
		err = ch.ExchangeDeclare(t.exchange, amqp.ExchangeTopic, true, false, false, false, nil)
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("amqp: declare the topic exchange %s: %w", t.exchange, err)
	}
	_ = ch.Close()
	return conn, nil
}

func (a *amqpSender) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.conn != nil {
		_ = a.conn.Close()
		a.conn, a.idle = nil, nil
	}
}

// channel is an idle channel of the connection, dialled and declared when
// there is none.
func (a *amqpSender) channel() (*amqpChannel, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errAMQPClosed
	}
	if a.conn == nil || a.conn.IsClosed() {
		conn, err := dialAMQP(a.target, a.creds, a.o.dialer())
		if err != nil {
			a.redialLocked()
			return nil, err
		}
		a.useLocked(conn)
	}
	for len(a.idle) > 0 {
		c := a.idle[len(a.idle)-1]
		a.idle = a.idle[:len(a.idle)-1]
		if !c.ch.IsClosed() {
			return c, nil
		}
	}
	ch, err := a.conn.Channel()
	if err == nil {
		err = ch.Confirm(false)
	}
	if err != nil {
		return nil, fmt.Errorf("amqp: open a channel: %w", err)
	}
	return &amqpChannel{ch: ch, returns: ch.NotifyReturn(make(chan amqp.Return, 1))}, nil
}

// useLocked makes conn the connection, and redials when the broker drops it.
func (a *amqpSender) useLocked(conn *amqp.Connection) {
	a.conn, a.idle = conn, nil
	lost := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		if <-lost == nil {
			return // closed by the bridge
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.conn == conn {
			a.redialLocked()
		}
	}()
}

// redialLocked starts, unless running, the loop that dials the broker
// every amqpRedialEvery until it answers, and then wakes the backlog: the
// events waiting out their back-off go at once.
func (a *amqpSender) redialLocked() {
	if a.redialing || a.closed {
		return
	}
	a.redialing = true
	go func() {
		for {
			time.Sleep(amqpRedialEvery)
			conn, err := dialAMQP(a.target, a.creds, a.o.dialer())
			a.mu.Lock()
			if a.closed {
				a.redialing = false
				a.mu.Unlock()
				if conn != nil {
					_ = conn.Close()
				}
				return
			}
			if err == nil {
				if a.conn != nil && !a.conn.IsClosed() {
					// A delivery dialled meanwhile: closing its connection
					// would cut the confirms of its publishes in flight.
					_ = conn.Close()
				} else {
					a.useLocked(conn)
				}
				a.redialing = false
				a.mu.Unlock()
				a.o.targetAnswers(a.id)
				return
			}
			a.mu.Unlock()
		}
	}()
}

// release gives c back for the next publish, or drops it when it may still
// hold a confirm or return of the publish that failed.
func (a *amqpSender) release(c *amqpChannel, reusable bool) {
	if !reusable || c.ch.IsClosed() {
		_ = c.ch.Close()
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		_ = c.ch.Close()
		return
	}
	a.idle = append(a.idle, c)
}

func (a *amqpSender) send(ctx context.Context, l *live, ev Stored, at time.Time) (answer, error) {
	msg, err := amqpMessage(l, ev, at)
	if err != nil {
		return answer{}, err
	}
	c, err := a.channel()
	if err != nil {
		return answer{}, err
	}
	key := a.target.routingKey(a.account(), ev.Type)
	confirm, err := c.ch.PublishWithDeferredConfirmWithContext(ctx, a.target.exchange, key, true, false, msg)
	if err != nil {
		a.release(c, false)
		return answer{}, fmt.Errorf("amqp publish to %s: %w", key, err)
	}
	acked, err := confirm.WaitContext(ctx)
	if err != nil {
		a.release(c, false)
		return answer{}, fmt.Errorf("amqp publish to %s: no confirm: %w", key, err)
	}
	if !acked {
		a.release(c, false)
		return answer{}, fmt.Errorf("amqp publish to %s: the broker refused it (nack) or the channel was lost", key)
	}
	select {
	case r := <-c.returns:
		a.release(c, true)
		return answer{}, fmt.Errorf("amqp publish to %s: returned unroutable (%d %s): bind a queue to exchange %s for it",
			key, r.ReplyCode, r.ReplyText, a.target.exchange)
	default:
	}
	a.release(c, true)
	return answer{status: http.StatusOK}, nil // the publisher confirm
}

// amqpMessage is ev as a persistent message: the body and headers of its
// format, signed as an HTTP delivery is, the webhook-id as message id and
// the event type as type.
func amqpMessage(l *live, ev Stored, at time.Time) (amqp.Publishing, error) {
	body, header, err := l.format.Encode(ev)
	if err != nil {
		return amqp.Publishing{}, fmt.Errorf("encode %s: %w", l.Format, err)
	}
	h := http.Header{}
	for k, v := range l.Headers {
		h.Set(k, v)
	}
	for k, v := range header {
		h[k] = v
	}
	l.format.Sign(h, l.Secret, ev.ID, at, body)
	// Header names in the Standard Webhooks spelling, as NATS carries them.
	table := amqp.Table{}
	for k, v := range h {
		if k != "Content-Type" && len(v) > 0 {
			table[strings.ToLower(k)] = v[0]
		}
	}
	return amqp.Publishing{
		Headers: table, ContentType: h.Get("Content-Type"), DeliveryMode: amqp.Persistent,
		MessageId: ev.ID, Type: ev.Type, Timestamp: at, AppId: "msgbridge", Body: body,
	}, nil
}

// probeAMQP connects with s's credentials and declares the exchange: a
// broker that does not answer, refuses the credentials or the virtual
// host, or has the exchange as another kind, is refused.
func probeAMQP(s Subscription, u *url.URL, dialer *net.Dialer) error {
	t, err := parseAMQPTarget(u)
	if err != nil {
		return err
	}
	conn, err := dialAMQP(t, s.Credentials, dialer)
	if err != nil {
		if amqpErr, ok := errors.AsType[*amqp.Error](err); ok {
			// The broker's own answer (access refused, no such vhost, an
			// exchange of another kind) names its configuration, not the
			// network.
			return probeRefusal{fmt.Sprintf("the broker refused: %s", amqpErr.Reason)}
		}
		return err
	}
	return conn.Close()
}
