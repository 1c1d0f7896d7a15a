package messaging

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// The channel endpoints (API key). Every one asks WhatsApp, so each spends
// a turn of the group actions' pace (GROUP_ACTION_RATE): a client polling
// channels must not make the account look like a machine. Following and
// unfollowing change the account: audited, under an Idempotency-Key. A
// post goes to a channel the account owns through POST /api/messages, the
// send queue, like any message.

// Channels reads and follows channels through the session
// (*whatsapp.Session). Each method is one query to WhatsApp.
type Channels interface {
	Channels(ctx context.Context) ([]bridge.Channel, error)
	FollowChannel(ctx context.Context, invite string) (bridge.Channel, error)
	UnfollowChannel(ctx context.Context, channel bridge.Recipient) error
	ChannelPosts(ctx context.Context, channel bridge.Recipient, count int, before int64) ([]bridge.ChannelPost, error)
}

// defaultChannelPosts is how many posts a read without ?limit= returns.
const defaultChannelPosts = 20

func (s *server) channelRoutes(r *mux.Router) {
	if s.Channels == nil {
		return
	}
	httpkit.Mount(r, []httpkit.Route{
		{Path: "/api/channels", Method: httpkit.Get, H: s.listChannels},
		{Path: "/api/channels", Method: httpkit.Post, H: s.followChannel},
		{Path: "/api/channels/{jid}", Method: httpkit.Del, H: s.unfollowChannel},
		{Path: "/api/channels/{jid}/posts", Method: httpkit.Get, H: s.channelPosts},
	}, s.keyed)
}

type channelJSON struct {
	JID         string `json:"jid"`
	Name        string `json:"name"`
	Description string `json:"description"`
	InviteLink  string `json:"invite_link"`
	Followers   int    `json:"followers"`
	Created     string `json:"created"`
	Role        string `json:"role"`
	Muted       bool   `json:"muted"`
	Verified    bool   `json:"verified"`
}

func channelOf(c bridge.Channel) channelJSON {
	return channelJSON{JID: c.JID, Name: c.Name, Description: c.Description, InviteLink: bridge.ChannelLink(c.Invite),
		Followers: c.Followers, Created: bridge.FormatTime(c.Created), Role: c.Role, Muted: c.Muted, Verified: c.Verified}
}

type channelPostJSON struct {
	ServerID   int64          `json:"server_id"`
	WhatsAppID string         `json:"whatsapp_id"`
	Type       *string        `json:"type"`
	Text       string         `json:"text"`
	Timestamp  string         `json:"timestamp"`
	Views      int            `json:"views"`
	Reactions  map[string]int `json:"reactions"`
}

// listChannels is GET /api/channels: the channels the account follows or
// owns.
func (s *server) listChannels(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	if err := s.Groups.Actions.Pace.Admit(r.Context(), 1); err != nil {
		return withRetryAfter(w, err)
	}
	list, err := s.Channels.Channels(r.Context())
	if err != nil {
		return httpkit.SessionError(err)
	}
	out := make([]channelJSON, 0, len(list))
	for _, c := range list {
		out = append(out, channelOf(c))
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{"channels": out})
}

type followBody struct {
	Invite *string `json:"invite"`
}

// followChannel is POST /api/channels {invite}: 200 {channel}.
func (s *server) followChannel(w http.ResponseWriter, r *http.Request) error {
	var body followBody
	raw, err := readGroupJSON(w, r, &body)
	if err != nil {
		return err
	}
	if body.Invite == nil {
		return bridge.Invalid(bridge.CodeMissingInvite, `the body needs "invite", https://whatsapp.com/channel/<code>`)
	}
	code, err := bridge.ParseChannelInvite(*body.Invite)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, raw, groupAction{audit: audit.ActionChannelFollow, detail: code, cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			c, err := s.Channels.FollowChannel(ctx, code)
			return http.StatusOK, map[string]any{"channel": channelOf(c)}, err
		}})
}

// unfollowChannel is DELETE /api/channels/{jid}: 204.
func (s *server) unfollowChannel(w http.ResponseWriter, r *http.Request) error {
	c, err := bridge.ParseChannel(mux.Vars(r)["jid"])
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, nil, groupAction{audit: audit.ActionChannelUnfollow, detail: c.JID(), cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			return http.StatusNoContent, nil, s.Channels.UnfollowChannel(ctx, c)
		}})
}

// channelPosts is GET /api/channels/{jid}/posts?limit&before: the
// channel's recent posts, oldest first; before (a server_id) pages back.
func (s *server) channelPosts(w http.ResponseWriter, r *http.Request) error {
	c, err := bridge.ParseChannel(mux.Vars(r)["jid"])
	if err != nil {
		return err
	}
	limit, before, err := channelPostsQuery(r)
	if err != nil {
		return err
	}
	if err := s.Groups.Actions.Pace.Admit(r.Context(), 1); err != nil {
		return withRetryAfter(w, err)
	}
	posts, err := s.Channels.ChannelPosts(r.Context(), c, limit, before)
	if err != nil {
		return httpkit.SessionError(err)
	}
	out := make([]channelPostJSON, 0, len(posts))
	for _, p := range posts {
		reactions := p.Reactions
		if reactions == nil {
			reactions = map[string]int{}
		}
		out = append(out, channelPostJSON{ServerID: p.ServerID, WhatsAppID: p.WhatsAppID, Type: optionalString(p.Type),
			Text: p.Text, Timestamp: bridge.FormatTime(p.Timestamp), Views: p.Views, Reactions: reactions})
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{"channel": c.JID(), "posts": out})
}

// channelPostsQuery reads ?limit (1 to bridge.MaxChannelPosts) and
// ?before (a post's server_id).
func channelPostsQuery(r *http.Request) (int, int64, error) {
	q, err := httpkit.StrictQuery(r, "apiKey", "limit", "before")
	if err != nil {
		return 0, 0, err
	}
	limit := defaultChannelPosts
	if v, ok := q["limit"]; ok {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > bridge.MaxChannelPosts {
			return 0, 0, bridge.Invalid(bridge.CodeInvalidLimit, "limit must be a number from 1 to %d", bridge.MaxChannelPosts)
		}
	}
	var before int64
	if v, ok := q["before"]; ok {
		if before, err = strconv.ParseInt(v, 10, 64); err != nil || before < 1 {
			return 0, 0, bridge.Invalid(bridge.CodeInvalidBefore, "before must be a post's server_id, a number from 1")
		}
	}
	return limit, before, nil
}
