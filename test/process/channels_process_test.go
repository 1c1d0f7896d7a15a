package process

import (
	"net/http"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

type channelAnswer struct {
	JID, Name, Role string
	InviteLink      string `json:"invite_link"`
	Followers       int
}

// Channels end to end: the bridge follows a channel by its invite link,
// lists it and reads its posts through the API; with CHANNEL_POSTS on a
// new post arrives as channel.post; a post to a channel the account owns
// goes through POST /api/messages (the send queue) to its followers; and
// after an unfollow the channel is no longer listed.
func TestChannelsThroughTheAPI(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "GROUP_ACTION_RATE=100/s", "CHANNEL_POSTS=on")...)
	ana := sim.Contact(alice, "Alice")
	news := sim.CreateChannel(ana, "Ops news", "what ops say")
	if _, err := news.Post(&waE2E.Message{Conversation: proto.String("opening hours change on Monday")}); err != nil {
		t.Fatal(err)
	}

	var followed struct{ Channel channelAnswer }
	code, raw := groupCall(t, p, "POST", "/api/channels", "application/json", `{"invite":"`+news.InviteLink()+`"}`, "follow-1", &followed)
	if code != http.StatusOK || followed.Channel.JID != news.JID().String() || followed.Channel.Role != "subscriber" || followed.Channel.InviteLink != news.InviteLink() {
		t.Fatalf("follow: %d %s", code, raw)
	}
	var list struct{ Channels []channelAnswer }
	if code, raw := groupCall(t, p, "GET", "/api/channels", "", "", "", &list); code != http.StatusOK || len(list.Channels) != 1 || list.Channels[0].Followers != 1 {
		t.Fatalf("list: %d %s", code, raw)
	}
	var posts struct {
		Posts []struct {
			ServerID int64 `json:"server_id"`
			Text     string
		}
	}
	code, raw = groupCall(t, p, "GET", "/api/channels/"+news.JID().String()+"/posts?limit=5", "", "", "", &posts)
	if code != http.StatusOK || len(posts.Posts) != 1 || posts.Posts[0].Text != "opening hours change on Monday" {
		t.Fatalf("posts: %d %s", code, raw)
	}

	if _, err := news.Post(&waE2E.Message{Conversation: proto.String("closed on Friday")}); err != nil {
		t.Fatal(err)
	}
	post := hooks.wait("channel.post", func(e hookEvent) bool { return e.str("event") == "channel.post" })
	if post.str("channel") != news.JID().String() || post.str("text") != "closed on Friday" || post.str("type") != "text" {
		t.Errorf("channel.post %v", post)
	}

	owned := sim.CreateChannel(sim.Phone(testAccount), "Our channel", "")
	owned.Follow(ana)
	if code, raw := apiJSON(t, p, "POST", "/api/messages", `{"to":"`+owned.JID().String()+`","type":"text","text":"hello followers"}`, nil); code >= 300 {
		t.Fatalf("post to the owned channel: %d %s", code, raw)
	}
	testutil.Poll(t, wasimtest.WaitTimeout, func() ([]string, bool) { got := owned.Posts(); return got, len(got) == 1 })
	if got := owned.Posts(); got[0] != "hello followers" {
		t.Errorf("the channel's posts %q", got)
	}

	if code, raw := groupCall(t, p, "DELETE", "/api/channels/"+news.JID().String(), "", "", "", nil); code != http.StatusNoContent {
		t.Fatalf("unfollow: %d %s", code, raw)
	}
	code, raw = groupCall(t, p, "GET", "/api/channels", "", "", "", &list)
	if code != http.StatusOK || len(list.Channels) != 1 || list.Channels[0].JID != owned.JID().String() || list.Channels[0].Role != "owner" {
		t.Errorf("list after the unfollow: %d %s", code, raw)
	}
	if code, raw := groupCall(t, p, "POST", "/api/channels", "application/json", `{"invite":"https://whatsapp.com/channel/nosuchchannel"}`, "", nil); code != http.StatusNotFound || !strings.Contains(raw, "channel_not_found") {
		t.Errorf("an unknown invite: %d %s", code, raw)
	}
}
