package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// probeTimeout bounds the check of a new target.
const probeTimeout = 5 * time.Second

// sender reaches one kind of target.
type sender interface {
	// send makes one delivery attempt of ev to l at at.
	send(ctx context.Context, l *live, ev Stored, at time.Time) (answer, error)
	close()
}

// newSender is the sender of s's target.
func (o *Outbox) newSender(s Subscription) (sender, error) {
	u, err := url.Parse(s.Target)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case schemeNATS:
		return o.newNATSSender(s, u)
	case schemeAMQP, schemeAMQPS:
		return o.newAMQPSender(s, u)
	}
	return httpSender{client: o.opts.Client}, nil
}

// probe checks that s's target can be reached: for HTTP a TCP connection
// to its host and port (no request: the receiver would see an event that
// is none); for NATS a connection and the lookup of the stream that takes
// its subjects; for AMQP a connection and the declaration of its exchange.
func (o *Outbox) probe(ctx context.Context, s Subscription) error {
	if o.opts.Probe != nil {
		return o.opts.Probe(ctx, s)
	}
	u, err := url.Parse(s.Target)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	switch u.Scheme {
	case schemeNATS:
		err = probeNATS(ctx, s, u, o.dialer())
	case schemeAMQP, schemeAMQPS:
		err = probeAMQP(s, u, o.dialer())
	default:
		err = o.probeTCP(ctx, u)
	}
	if err != nil {
		return o.unreachable(s, u, err)
	}
	if f, ferr := formatOf(s.Format); ferr == nil {
		if v, ok := f.(Verifier); ok {
			if err := v.Verify(ctx, s); err != nil {
				return invalid(bridge.CodeTargetUnverified, "target %s refused the verification handshake: %v", redacted(u), err)
			}
		}
	}
	return nil
}

// probeRefusal is a probe's failure whose text names the target's own
// configuration, not the network on the way, and may go to the caller.
type probeRefusal struct{ text string }

func (p probeRefusal) Error() string { return p.text }

// unreachable is the one answer to a target the probe could not reach:
// the connection's detail (refused, no such host, a timeout) would map
// the pod's network to whoever may create subscriptions, so it goes to
// the log at debug only.
func (o *Outbox) unreachable(s Subscription, u *url.URL, err error) error {
	if p, ok := errors.AsType[probeRefusal](err); ok {
		return invalid(bridge.CodeTargetUnreachable, "target %s: %s", redacted(u), p.text)
	}
	o.opts.Log.V(1).Info("subscription target unreachable", "subscription", s.ID, "target", redacted(u), "cause", err.Error())
	if errors.Is(err, errLocalTarget) {
		return invalid(bridge.CodeTargetNotAllowed, "target %s resolves to a loopback or link-local address, "+
			"which subscriptions may not reach unless WEBHOOK_LOCAL_TARGETS is on", redacted(u))
	}
	return invalid(bridge.CodeTargetUnreachable, "target %s could not be reached", redacted(u))
}

func (o *Outbox) probeTCP(ctx context.Context, u *url.URL) error {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == schemeHTTPS {
			port = "443"
		}
	}
	conn, err := o.dialer().DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return err
	}
	return conn.Close()
}

// redacted is u for messages: scheme, host and path.
func redacted(u *url.URL) string { return u.Scheme + "://" + u.Host + u.Path }

// httpSender posts to an HTTP(S) receiver.
type httpSender struct{ client *http.Client }

func (httpSender) close() {}

func (h httpSender) send(ctx context.Context, l *live, ev Stored, at time.Time) (answer, error) {
	body, header, err := l.format.Encode(ev)
	if err != nil {
		return answer{}, fmt.Errorf("encode %s: %w", l.Format, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.Target, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	for k, v := range l.Headers {
		req.Header.Set(k, v)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	l.format.Sign(req.Header, l.Secret, ev.ID, at, body)
	resp, err := h.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	// Drained (a little) so that the connection is reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), location: resp.Header.Get("Location")}, nil
}
