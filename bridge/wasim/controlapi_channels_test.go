package wasim_test

import (
	"testing"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// A channel made through the control API, with the account as follower:
// the linked whatsmeow client lists it (GraphQL), its owner's post reaches
// the client as a plaintext newsletter message, and the client reads it
// back among the channel's posts. An unknown owner or channel is refused.
func TestControlAPIChannelPostReachesTheClient(t *testing.T) {
	t.Parallel()
	base, ctx, tc, _ := phoneAndClient(t)
	var ch struct {
		JID        string `json:"jid"`
		InviteLink string `json:"invite_link"`
	}
	api(t, base, "POST", "/v1/channels", map[string]any{"owner": "4915700000002", "name": "Kim news", "followers": []string{"4915700000001"}}, 201, &ch)
	list, err := tc.GetSubscribedNewsletters(ctx)
	if err != nil || len(list) != 1 || list[0].ID.String() != ch.JID || list[0].ThreadMeta.Name.Text != "Kim news" || list[0].ViewerMeta.Role != types.NewsletterRoleSubscriber {
		t.Fatalf("subscribed %+v, %v", list, err)
	}
	var posted struct {
		ServerID int `json:"server_id"`
	}
	api(t, base, "POST", "/v1/channels/"+ch.JID+"/posts", map[string]any{"text": "hello followers"}, 200, &posted)
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.Chat.String() == ch.JID })
	if m.Message.GetConversation() != "hello followers" || m.Info.ServerID != posted.ServerID {
		t.Errorf("the client got %+v: %v", m.Info, m.Message)
	}
	jid, _ := types.ParseJID(ch.JID)
	msgs, err := tc.GetNewsletterMessages(ctx, jid, nil)
	if err != nil || len(msgs) != 1 || msgs[0].Message.GetConversation() != "hello followers" {
		t.Errorf("posts read back: %+v, %v", msgs, err)
	}
	api(t, base, "POST", "/v1/channels", map[string]any{"owner": "4915799999999", "name": "x"}, 400, nil)
	api(t, base, "POST", "/v1/channels/120363999@newsletter/posts", map[string]any{"text": "x"}, 404, nil)
}
