package main

import (
	"context"
	"math"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/incoming"
	"github.com/msgbridge/msgbridge/bridge/media"
	"github.com/msgbridge/msgbridge/bridge/metrics"
	"github.com/msgbridge/msgbridge/bridge/notify"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// sessionEvents is where what the WhatsApp link receives goes: incoming
// messages to the receive use case (Incoming), reconnects into the metrics.
// State changes and receipts go from the session to the message log and the
// outbox directly.
type sessionEvents struct {
	incoming.Receiver
	metrics *metrics.Metrics
}

var _ whatsapp.Events = sessionEvents{}

func (e sessionEvents) Reconnected() { e.metrics.Reconnect() }

// trafficObserver hears the message log's and the webhook outbox's
// committed changes for the metrics and tells the dashboard's streams.
type trafficObserver struct {
	*metrics.Metrics
	traffic *notify.Changes
}

var (
	_ sendqueue.Observer = trafficObserver{}
	_ webhook.Observer   = trafficObserver{}
)

func (o trafficObserver) MessageStatus(s bridge.Status) {
	o.Metrics.MessageStatus(s)
	o.traffic.Notify()
}

// SendAttempt: a failed attempt counts a retry, which the pages show.
func (o trafficObserver) SendAttempt(ok bool, d time.Duration) {
	o.Metrics.SendAttempt(ok, d)
	o.traffic.Notify()
}

// WebhookDeadLetter: the receivers' page lists dead letters.
func (o trafficObserver) WebhookDeadLetter(subscription string) {
	o.Metrics.WebhookDeadLetter(subscription)
	o.traffic.Notify()
}

// mediaSource is where the media downloader fetches attachments: the
// WhatsApp session.
type mediaSource struct{ session *whatsapp.Session }

var _ media.Source = mediaSource{}

func (s mediaSource) Download(ctx context.Context, source []byte, dst *media.Scratch) error {
	return s.session.Download(ctx, source, dst)
}

// gauges are the metrics read at each scrape from the parts that know them.
func gauges(ctx context.Context, messages *sendqueue.MessageLog, webhooks *webhook.Outbox, session bridge.Session) metrics.Sources {
	return metrics.Sources{
		SendQueueDepth:    depth(ctx, messages.Depth),
		WebhookQueueDepth: depth(ctx, webhooks.Pending),
		SessionState:      func() string { return string(session.Status().State) },
		HeartbeatAge: func() float64 {
			if hb := session.Status().LastHeartbeat; !hb.IsZero() {
				return time.Since(hb).Seconds()
			}
			return math.NaN()
		},
		SendingRestricted: func() float64 {
			if session.Status().RestrictedUntil.After(time.Now()) {
				return 1
			}
			return 0
		},
	}
}

// depth reads a queue's depth; NaN when it cannot be read, so a scrape shows
// the gap instead of a made-up zero.
func depth(ctx context.Context, read func(context.Context) (int, error)) func() float64 {
	return func() float64 {
		n, err := read(ctx)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	}
}

// quotes finds the message a reply quotes: among what the bridge sent, then
// among what it received.
type quotes []whatsapp.QuoteSource

func (q quotes) Quoted(ctx context.Context, chat bridge.Recipient, id string) (bridge.Quoted, bool, error) {
	for _, s := range q {
		if found, ok, err := s.Quoted(ctx, chat, id); ok || err != nil {
			return found, ok, err
		}
	}
	return bridge.Quoted{}, false, nil
}

// downloadsOnConnect starts the media downloads that found no session (all
// of them just after a restart) each time the session connects, instead of
// at their next look up to half a minute later.
func (a *app) downloadsOnConnect(ctx context.Context) error {
	return a.eachConnect(ctx, func() {
		if err := a.downloads.SessionConnected(ctx); err != nil && ctx.Err() == nil {
			a.log.Error(err, "start the deferred media downloads")
		}
	})
}

// eachConnect calls connected each time the session connects, until ctx
// ends.
func (a *app) eachConnect(ctx context.Context, connected func()) error {
	changes, stop := a.session.Subscribe()
	defer stop()
	var was bool
	for {
		now := a.session.Status().Connected()
		if now && !was {
			connected()
		}
		was = now
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
		}
	}
}

// polls are the polls the bridge sent (the log) with their votes (the
// inbox), for GET /api/messages/{id}.
type polls struct {
	*sendqueue.MessageLog
	*inbox.Inbox
}
