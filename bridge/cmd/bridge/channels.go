package main

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// channelPosts puts the posts of the channels the account follows into the
// webhook outbox (channel.post, CHANNEL_POSTS on), before WhatsApp gets
// the post's ack.
type channelPosts struct {
	webhooks *webhook.Outbox
	writer   *sqlite.Batcher
}

var _ whatsapp.ChannelEvents = channelPosts{}

func (e channelPosts) ChannelPosted(ctx context.Context, p bridge.ChannelPost) error {
	if !e.webhooks.Enabled() {
		return nil
	}
	return e.writer.Do(ctx, func(tx *sql.Tx) error { return e.webhooks.Enqueue(ctx, tx, webhook.ChannelPost(p)) })
}

// channelEvents is CHANNEL_POSTS: the port that hears channel posts when
// on, none when off.
func channelEvents(on bool, webhooks *webhook.Outbox, writer *sqlite.Batcher) whatsapp.ChannelEvents {
	if !on {
		return nil
	}
	return channelPosts{webhooks: webhooks, writer: writer}
}
