package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// Channels (newsletters) through the linked account. Each method is one
// query to WhatsApp; the pace is the caller's (the API's group action
// budget). A post to a channel the account owns is a message like any
// other: the send queue sends it to the channel's JID.

// ChannelEvents hears the posts of the channels the account follows
// (channel.post); nil in Options: they are acknowledged and dropped.
type ChannelEvents interface {
	// ChannelPosted runs before the post is acked: an error refuses the
	// ack, and WhatsApp delivers it again.
	ChannelPosted(ctx context.Context, p bridge.ChannelPost) error
}

// channelJID reads a channel recipient as whatsmeow names it.
func channelJID(c bridge.Recipient) (types.JID, error) {
	if c.Kind != bridge.RecipientChannel {
		return types.EmptyJID, bridge.ErrInvalidChannel
	}
	return types.ParseJID(c.JID())
}

// channelError maps WhatsApp's answers to a channel query: GraphQL's 404
// (or the IQ's) is a channel it does not know.
func channelError(err error) error {
	var gql types.GraphQLError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, whatsmeow.ErrIQNotFound), errors.As(err, &gql) && gql.Extensions.ErrorCode == 404:
		return bridge.ErrChannelNotFound
	case errors.Is(err, whatsmeow.ErrNotConnected), errors.Is(err, whatsmeow.ErrIQTimedOut):
		return fmt.Errorf("%w: %w", bridge.ErrNotLinked, err)
	}
	return err
}

// channelOf is whatsmeow's channel metadata in the domain's terms.
func channelOf(md *types.NewsletterMetadata) bridge.Channel {
	t := md.ThreadMeta
	c := bridge.Channel{JID: md.ID.String(), Name: t.Name.Text, Description: t.Description.Text, Invite: t.InviteCode,
		Followers: t.SubscriberCount, Created: t.CreationTime.Time, Role: bridge.ChannelGuest,
		Verified: t.VerificationState == types.NewsletterVerificationStateVerified}
	if v := md.ViewerMeta; v != nil {
		c.Role, c.Muted = string(v.Role), v.Mute == types.NewsletterMuteOn
	}
	return c
}

// Channels lists the channels the account follows or owns, by JID.
func (m *Session) Channels(ctx context.Context) ([]bridge.Channel, error) {
	cli, err := m.readyClient()
	if err != nil {
		return nil, err
	}
	mds, err := cli.GetSubscribedNewsletters(ctx)
	if err != nil {
		return nil, channelError(err)
	}
	out := make([]bridge.Channel, 0, len(mds))
	for _, md := range mds {
		if md != nil {
			out = append(out, channelOf(md))
		}
	}
	slices.SortFunc(out, func(a, b bridge.Channel) int { return compare(a.JID, b.JID) })
	return out, nil
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FollowChannel finds the channel of an invite code and follows it; the
// answer is the channel as the account now sees it.
func (m *Session) FollowChannel(ctx context.Context, invite string) (bridge.Channel, error) {
	cli, err := m.readyClient()
	if err != nil {
		return bridge.Channel{}, err
	}
	md, err := cli.GetNewsletterInfoWithInvite(ctx, invite)
	if err != nil {
		return bridge.Channel{}, channelError(err)
	}
	if md == nil {
		return bridge.Channel{}, bridge.ErrChannelNotFound
	}
	if err := cli.FollowNewsletter(ctx, md.ID); err != nil {
		return bridge.Channel{}, channelError(err)
	}
	c := channelOf(md)
	if c.Role == bridge.ChannelGuest {
		c.Role = bridge.ChannelSubscriber
	}
	return c, nil
}

// UnfollowChannel stops following a channel.
func (m *Session) UnfollowChannel(ctx context.Context, channel bridge.Recipient) error {
	cli, err := m.readyClient()
	if err != nil {
		return err
	}
	jid, err := channelJID(channel)
	if err != nil {
		return err
	}
	return channelError(cli.UnfollowNewsletter(ctx, jid))
}

// ChannelPosts reads a channel's recent posts, at most count, before the
// post numbered before (0: the newest), oldest first.
func (m *Session) ChannelPosts(ctx context.Context, channel bridge.Recipient, count int, before int64) ([]bridge.ChannelPost, error) {
	cli, err := m.readyClient()
	if err != nil {
		return nil, err
	}
	jid, err := channelJID(channel)
	if err != nil {
		return nil, err
	}
	msgs, err := cli.GetNewsletterMessages(ctx, jid, &whatsmeow.GetNewsletterMessagesParams{Count: count, Before: int(before)})
	if err != nil {
		return nil, channelError(err)
	}
	out := make([]bridge.ChannelPost, 0, len(msgs))
	for _, msg := range msgs {
		p := channelPostOf(ctx, cli, jid, msg.Message)
		p.ServerID, p.WhatsAppID, p.Timestamp = int64(msg.MessageServerID), msg.MessageID, msg.Timestamp
		p.Views, p.Reactions = msg.ViewsCount, maps.Clone(msg.ReactionCounts)
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b bridge.ChannelPost) int { return int(a.ServerID - b.ServerID) })
	return out, nil
}

// channelPostOf reads a post's type and text as a received message's are
// read; a post's media stays on WhatsApp's servers (its type and caption
// are reported).
func channelPostOf(ctx context.Context, cli *whatsmeow.Client, jid types.JID, msg *waE2E.Message) bridge.ChannelPost {
	p := bridge.ChannelPost{Channel: jid.String()}
	if msg == nil {
		return p
	}
	var in bridge.Incoming
	if content(ctx, cli, msg, &in) {
		p.Type, p.Text = in.Type, in.Text
	}
	return p
}

// channelPost passes a post of a followed channel on (channel.post); a
// post the account made itself, or any when no one listens, is acked and
// dropped.
func (m *Session) channelPost(cli *whatsmeow.Client, e *events.Message) bool {
	if m.opts.ChannelPosts == nil || e.Info.IsFromMe || e.Message == nil {
		return true
	}
	p := channelPostOf(m.bgCtx, cli, e.Info.Chat, e.Message)
	if p.Type == "" {
		return true // a reaction, an edit, something the events do not name
	}
	p.ServerID, p.WhatsAppID, p.Timestamp = int64(e.Info.ServerID), e.Info.ID, e.Info.Timestamp
	if err := m.opts.ChannelPosts.ChannelPosted(m.bgCtx, p); err != nil {
		m.log.Error(err, "store channel post; WhatsApp will deliver it again", "channel", p.Channel)
		return false
	}
	return true
}

// channelContent builds a channel post: an attachment is uploaded
// unencrypted (a channel's media is public), and WhatsApp ties the post to
// its upload by the upload's handle.
func (m *Session) channelContent(ctx context.Context, cli *whatsmeow.Client, out bridge.Outgoing) (*waE2E.Message, string, error) {
	kind, ok := out.Type.Kind()
	if !ok || kind.Part != bridge.PartFile {
		msg, err := m.buildMessage(ctx, cli, out)
		return msg, "", err
	}
	f, err := os.Open(out.FilePath) //nolint:gosec // a spool path the bridge created
	if err != nil {
		return nil, "", fmt.Errorf("open attachment: %w", err)
	}
	defer func() { _ = f.Close() }()
	up, err := cli.UploadNewsletterReader(ctx, f, mediaKinds[out.Type])
	if err != nil {
		return nil, "", fmt.Errorf("upload: %w", err)
	}
	return mediaMessage(out, up), up.Handle, nil
}
