package webhook

import "github.com/msgbridge/msgbridge/bridge"

// TypeChannelPost is a post of a channel the account follows
// (CHANNEL_POSTS on).
const TypeChannelPost = "channel.post"

type channelPostPayload struct {
	Event      string `json:"event"`
	Channel    string `json:"channel"`
	ServerID   int64  `json:"server_id"`
	WhatsAppID string `json:"whatsapp_id"`
	Type       string `json:"type"`
	Text       string `json:"text"`
	Timestamp  string `json:"timestamp"`
}

// ChannelPost is a channel.post event. The posts of one channel keep
// their order.
func ChannelPost(p bridge.ChannelPost) Event {
	return Event{Type: TypeChannelPost, Key: "channel:" + p.Channel, Payload: channelPostPayload{
		Event: TypeChannelPost, Channel: p.Channel, ServerID: p.ServerID, WhatsAppID: p.WhatsAppID, Type: p.Type,
		Text: p.Text, Timestamp: bridge.FormatTime(p.Timestamp),
	}}
}
