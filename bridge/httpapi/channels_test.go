package httpapi

import (
	"github.com/go-logr/logr"

	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/groupadmin"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// fakeChannels is the session's channels: one known invite, and a count of
// the queries that reached "WhatsApp".
type fakeChannels struct {
	mu      sync.Mutex
	queries int
	asked   []string // what each query named
}

const knownInvite = "0029VaZ4tB1Hgk1T0RvXJm2c"

func (f *fakeChannels) ask(what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	f.asked = append(f.asked, what)
}

func (f *fakeChannels) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries
}

func (f *fakeChannels) Channels(context.Context) ([]bridge.Channel, error) {
	f.ask("list")
	return []bridge.Channel{{JID: "120363000000000001@newsletter", Name: "Ops news", Invite: knownInvite, Followers: 3,
		Created: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Role: bridge.ChannelSubscriber}}, nil
}

func (f *fakeChannels) FollowChannel(_ context.Context, invite string) (bridge.Channel, error) {
	f.ask("follow " + invite)
	if invite != knownInvite {
		return bridge.Channel{}, bridge.ErrChannelNotFound
	}
	return bridge.Channel{JID: "120363000000000001@newsletter", Name: "Ops news", Invite: invite, Role: bridge.ChannelSubscriber}, nil
}

func (f *fakeChannels) UnfollowChannel(_ context.Context, c bridge.Recipient) error {
	f.ask("unfollow " + c.JID())
	return nil
}

func (f *fakeChannels) ChannelPosts(_ context.Context, c bridge.Recipient, count int, before int64) ([]bridge.ChannelPost, error) {
	f.ask("posts " + c.JID())
	return []bridge.ChannelPost{{Channel: c.JID(), ServerID: 100, WhatsAppID: "3EB0AA", Type: "text", Text: "hello",
		Timestamp: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}}, nil
}

func channelServer(t *testing.T, rate bridge.SendRate) (*fakeChannels, func(method, path, body string, headers ...string) (int, string)) {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	channels := &fakeChannels{}
	srv := newTestServer(t, testDeps{Channels: channels, GroupActions: groupadmin.New(sendqueue.NewAnswers(db, writer, time.Now), rate, time.Now, logr.Discard())})
	return channels, func(method, path, body string, headers ...string) (int, string) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
			headers = append(headers, "Content-Type: application/json")
		}
		resp := do(t, method, srv.URL+path, rd, append(headers, "X-Api-Key: "+testAPIKey)...)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
}

// Bad input is refused with its own code before anything reaches WhatsApp.
func TestChannelsRefuseBadInput(t *testing.T) {
	t.Parallel()
	channels, call := channelServer(t, bridge.SendRate{N: 60, Per: time.Minute})
	for _, c := range []struct{ method, path, body, code string }{
		{"POST", "/api/channels", `{}`, "missing_invite"},
		{"POST", "/api/channels", `{"invite":"https://chat.whatsapp.com/abc"}`, "invalid_channel_invite"},
		{"POST", "/api/channels", `{"invite":"a b"}`, "invalid_channel_invite"},
		{"POST", "/api/channels", `{"invite":"abc","extra":1}`, "invalid_json"},
		{"DELETE", "/api/channels/120363000000000001@g.us", "", "invalid_channel"},
		{"DELETE", "/api/channels/abc@newsletter", "", "invalid_channel"},
		{"GET", "/api/channels/120363000000000001@newsletter/posts?limit=0", "", "invalid_limit"},
		{"GET", "/api/channels/120363000000000001@newsletter/posts?limit=101", "", "invalid_limit"},
		{"GET", "/api/channels/120363000000000001@newsletter/posts?before=x", "", "invalid_before"},
		{"GET", "/api/channels/120363000000000001@newsletter/posts?since=1", "", "invalid_query"},
		{"GET", "/api/channels?page=2", "", "invalid_query"},
	} {
		status, body := call(c.method, c.path, c.body)
		if status != http.StatusBadRequest || errorCode(t, body) != c.code {
			t.Errorf("%s %s %s: %d %s, want 400 %s", c.method, c.path, c.body, status, body, c.code)
		}
	}
	if channels.count() != 0 {
		t.Errorf("%d queries reached WhatsApp: %v", channels.count(), channels.asked)
	}
}

// Following takes an invite link (or its code), answers the channel, and
// keeps its answer under an Idempotency-Key; an unknown invite is 404
// channel_not_found; a list, a read and an unfollow answer as described.
func TestChannelsFollowListReadUnfollow(t *testing.T) {
	t.Parallel()
	channels, call := channelServer(t, bridge.SendRate{N: 60, Per: time.Minute})
	status, body := call("POST", "/api/channels", `{"invite":"https://whatsapp.com/channel/`+knownInvite+`"}`, "Idempotency-Key: f1")
	if status != http.StatusOK || !strings.Contains(body, `"jid":"120363000000000001@newsletter"`) ||
		!strings.Contains(body, `"invite_link":"https://whatsapp.com/channel/`+knownInvite+`"`) {
		t.Fatalf("follow: %d %s", status, body)
	}
	if again, body2 := call("POST", "/api/channels", `{"invite":"https://whatsapp.com/channel/`+knownInvite+`"}`, "Idempotency-Key: f1"); again != status || body2 != body || channels.count() != 1 {
		t.Fatalf("the repeat asked again: %d %s, %d queries", again, body2, channels.count())
	}
	if status, body := call("POST", "/api/channels", `{"invite":"unknownCode"}`); status != http.StatusNotFound || errorCode(t, body) != "channel_not_found" {
		t.Errorf("unknown invite: %d %s", status, body)
	}
	if status, body := call("GET", "/api/channels", ""); status != http.StatusOK || !strings.Contains(body, `"followers":3`) || !strings.Contains(body, `"role":"subscriber"`) {
		t.Errorf("list: %d %s", status, body)
	}
	status, body = call("GET", "/api/channels/120363000000000001@newsletter/posts?limit=5&before=200", "")
	if status != http.StatusOK || !strings.Contains(body, `"server_id":100`) || !strings.Contains(body, `"text":"hello"`) || !strings.Contains(body, `"reactions":{}`) {
		t.Errorf("posts: %d %s", status, body)
	}
	if status, body := call("DELETE", "/api/channels/120363000000000001@newsletter", ""); status != http.StatusNoContent {
		t.Errorf("unfollow: %d %s", status, body)
	}
}

// Every channel query spends the group actions' pace: beyond the burst a
// read is refused with Retry-After, and nothing more reaches WhatsApp.
func TestChannelReadsArePaced(t *testing.T) {
	t.Parallel()
	channels, call := channelServer(t, bridge.SendRate{N: 1, Per: time.Hour})
	for i := range bridge.GroupActionBurst {
		if status, body := call("GET", "/api/channels", ""); status != http.StatusOK {
			t.Fatalf("read %d: %d %s", i, status, body)
		}
	}
	status, body := call("GET", "/api/channels/120363000000000001@newsletter/posts", "")
	if status != http.StatusTooManyRequests || errorCode(t, body) != "group_action_rate_limited" || channels.count() != bridge.GroupActionBurst {
		t.Errorf("beyond the pace: %d %s, %d queries", status, body, channels.count())
	}
}
