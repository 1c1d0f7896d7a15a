package whatsapp

import (
	"context"
	"errors"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow/proto/waE2E"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// postLog is the ChannelEvents port, recording what it heard.
type postLog struct {
	mu    sync.Mutex
	posts []bridge.ChannelPost
}

func (l *postLog) ChannelPosted(_ context.Context, p bridge.ChannelPost) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.posts = append(l.posts, p)
	return nil
}

func (l *postLog) all() []bridge.ChannelPost {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]bridge.ChannelPost(nil), l.posts...)
}

// The account follows a channel by its invite link, lists it, reads its
// posts, hears a new one (channel.post) and, once it unfollowed, neither
// lists it nor hears its posts.
func TestChannelFollowReadUnfollow(t *testing.T) {
	sim := wasim.Start(t)
	posts := &postLog{}
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.ChannelPosts = posts })
	linkByQR(t, sim, r)
	ctx := context.Background()
	news := sim.CreateChannel(sim.Contact("4915100000002", "Alice"), "Ops news", "what ops say")
	if _, err := news.Post(&waE2E.Message{Conversation: proto.String("first post")}); err != nil {
		t.Fatal(err)
	}

	if _, err := r.FollowChannel(ctx, "unknowncode"); !errors.Is(err, bridge.ErrChannelNotFound) {
		t.Fatalf("follow of an unknown invite: %v, want channel_not_found", err)
	}
	c, err := r.FollowChannel(ctx, news.InviteLink())
	if err != nil {
		t.Fatal(err)
	}
	if c.JID != news.JID().String() || c.Name != "Ops news" || c.Role != bridge.ChannelSubscriber {
		t.Errorf("followed %+v", c)
	}
	list, err := r.Channels(ctx)
	if err != nil || len(list) != 1 || list[0].JID != c.JID || list[0].Followers != 1 || list[0].Description != "what ops say" {
		t.Fatalf("channels %+v, %v", list, err)
	}
	channel, _ := bridge.ParseChannel(c.JID)
	read, err := r.ChannelPosts(ctx, channel, 10, 0)
	if err != nil || len(read) != 1 || read[0].Text != "first post" || read[0].Type != "text" || read[0].ServerID == 0 {
		t.Fatalf("posts %+v, %v", read, err)
	}

	if _, err := news.Post(&waE2E.Message{Conversation: proto.String("live post")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the live post", func() bool { return len(posts.all()) == 1 })
	if p := posts.all()[0]; p.Channel != c.JID || p.Text != "live post" || p.ServerID != read[0].ServerID+1 {
		t.Errorf("heard %+v", p)
	}

	if err := r.UnfollowChannel(ctx, channel); err != nil {
		t.Fatal(err)
	}
	if list, err := r.Channels(ctx); err != nil || len(list) != 0 {
		t.Errorf("channels after unfollow %+v, %v", list, err)
	}
	if len(news.Followers()) != 0 {
		t.Errorf("the channel still has followers %v", news.Followers())
	}
}

// A post to a channel the account owns goes through Send like any message
// and reaches the channel's followers; a post to a channel it only
// follows is refused by WhatsApp.
func TestChannelPostBySend(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	ctx := context.Background()
	owned := sim.CreateChannel(sim.Phone(account), "Our channel", "")
	reader := sim.Contact("4915100000002", "Alice")
	owned.Follow(reader)
	to, _ := bridge.ParseChannel(owned.JID().String())
	err := r.Send(ctx, bridge.Outgoing{ID: r.NewMessageID(), Recipient: to, Type: bridge.TypeText, Text: "hello followers"})
	if err != nil {
		t.Fatal(err)
	}
	photo := []byte("\x89PNG\r\n\x1a\nchannel photo")
	err = r.Send(ctx, bridge.Outgoing{ID: r.NewMessageID(), Recipient: to, Type: bridge.TypeImage, Text: "a photo",
		FilePath: spoolFile(t, photo), MimeType: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	if got := owned.Posts(); len(got) != 2 || got[0] != "hello followers" || got[1] != "a photo" {
		t.Errorf("posts %q", got)
	}
	if file, ok := owned.PostMedia(1); !ok || string(file) != string(photo) {
		t.Errorf("the photo's file as followers download it: %q (%v), want the plain upload", file, ok)
	}

	other := sim.CreateChannel(reader, "Alice's", "")
	other.Follow(sim.Phone(account))
	to, _ = bridge.ParseChannel(other.JID().String())
	if err := r.Send(ctx, bridge.Outgoing{ID: r.NewMessageID(), Recipient: to, Type: bridge.TypeText, Text: "not mine"}); err == nil {
		t.Error("a post to a channel the account only follows was accepted")
	}
}
