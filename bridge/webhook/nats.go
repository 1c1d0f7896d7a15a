package webhook

import (
	"context"
	"errors"
	"net/url"
)

func (o *Outbox) newNATSSender(Subscription, *url.URL) (sender, error) {
	return nil, errors.New("nats: not yet")
}

func probeNATS(context.Context, Subscription, *url.URL) error { return errors.New("nats: not yet") }
