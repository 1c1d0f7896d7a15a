package wasim

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// Channels (newsletters), as WhatsApp serves them to linked devices
// (whatsmeow's newsletter.go reads them). Metadata travels as GraphQL over
// <iq xmlns="w:mex"><query query_id>{"variables": …}</query></iq>, answered
// with <result>{"data": …}</result>; the web and desktop clients use
// different query ids for the same operation, and both are answered.
// Posts are plaintext, never encrypted:
//
//	<iq xmlns="newsletter" type="get"><messages jid count before/></iq>   recent posts
//	<message to=channel id type><plaintext mediatype?>proto</plaintext></message>   a post by its owner,
//	    acked with <ack server_id t>
//	<message from=channel id server_id t type><plaintext/></message>   a post reaching a follower's devices

// The GraphQL operations of whatsmeow's newsletter.go, by query id.
const (
	mexFetchChannel      = "6563316087068696"
	mexFetchChannelDesk  = "9779843322044422"
	mexSubscribed        = "6388546374527196"
	mexSubscribedOrFollw = "8621797084555037" // desktop: both the subscribed list and follow
	mexFollow            = "9926858900719341"
	mexUnfollow          = "6392786840836363"
	mexUnfollowDesk      = "8782612271820087"
)

// Channel is a channel of the simulated network: its owner posts, the
// users who follow it read.
type Channel struct {
	sim         *Simulator
	jid         types.JID
	invite      string
	name        string
	description string
	owner       *User
	created     time.Time

	// Guarded by sim.mu.
	followers []*User
	posts     []channelPost
}

// channelPost is a post as the server keeps it: numbered by server id.
type channelPost struct {
	serverID  int
	id        types.MessageID
	t         time.Time
	msgType   string
	mediaType string
	plaintext []byte
}

// channelBook is the network's channels; guarded by s.mu.
type channelBook struct {
	byJID    map[types.JID]*Channel
	byInvite map[string]*Channel
}

// CreateChannel makes a channel owner posts in; nobody follows it yet.
func (s *Simulator) CreateChannel(owner *User, name, description string) *Channel {
	id, _ := rand.Int(rand.Reader, big.NewInt(1e12))
	ch := &Channel{sim: s, jid: types.NewJID(fmt.Sprintf("120363%012d", id.Int64()), types.NewsletterServer),
		invite: randomBase64(16), name: name, description: description, owner: owner, created: time.Now().Truncate(time.Second)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.channels.byJID == nil {
		s.channels = channelBook{byJID: map[types.JID]*Channel{}, byInvite: map[string]*Channel{}}
	}
	s.channels.byJID[ch.jid], s.channels.byInvite[ch.invite] = ch, ch
	return ch
}

// LookupChannel finds a channel by its JID.
func (s *Simulator) LookupChannel(jid types.JID) (*Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels.byJID[jid]
	return ch, ok
}

// JID is the channel's address, <digits>@newsletter.
func (ch *Channel) JID() types.JID { return ch.jid }

// InviteLink is the link that finds the channel.
func (ch *Channel) InviteLink() string { return "https://whatsapp.com/channel/" + ch.invite }

// Followers lists the users who follow the channel.
func (ch *Channel) Followers() []*User {
	ch.sim.mu.Lock()
	defer ch.sim.mu.Unlock()
	return slices.Clone(ch.followers)
}

// Follow makes u follow the channel, as its phone would.
func (ch *Channel) Follow(u *User) {
	ch.sim.mu.Lock()
	defer ch.sim.mu.Unlock()
	if !slices.Contains(ch.followers, u) {
		ch.followers = append(ch.followers, u)
	}
}

// Posts are the texts (or captions) of the channel's posts, oldest first.
func (ch *Channel) Posts() []string {
	ch.sim.mu.Lock()
	defer ch.sim.mu.Unlock()
	out := make([]string, 0, len(ch.posts))
	for _, p := range ch.posts {
		var msg waE2E.Message
		_ = proto.Unmarshal(p.plaintext, &msg)
		out = append(out, orDefault(msg.GetConversation(), orDefault(msg.GetExtendedTextMessage().GetText(), captionOf(&msg))))
	}
	return out
}

func captionOf(msg *waE2E.Message) string {
	switch {
	case msg.GetImageMessage() != nil:
		return msg.GetImageMessage().GetCaption()
	case msg.GetVideoMessage() != nil:
		return msg.GetVideoMessage().GetCaption()
	case msg.GetDocumentMessage() != nil:
		return msg.GetDocumentMessage().GetCaption()
	}
	return ""
}

// Post publishes msg from the channel's owner's phone: it is kept as the
// channel's newest post, and every follower's linked devices receive it.
// It returns the post's server id.
func (ch *Channel) Post(msg *waE2E.Message) (int, error) {
	plaintext, err := proto.Marshal(msg)
	if err != nil {
		return 0, err
	}
	msgType, mediaType := classify(msg)
	return ch.publish(newMessageID(), msgType, mediaType, plaintext, nil), nil
}

// publish keeps a post and sends it to the followers' devices (but
// except's, the device that posted it).
func (ch *Channel) publish(id types.MessageID, msgType, mediaType string, plaintext []byte, except *conn) int {
	s := ch.sim
	s.mu.Lock()
	p := channelPost{serverID: 100 + len(ch.posts), id: id, t: time.Now(), msgType: msgType, mediaType: mediaType, plaintext: plaintext}
	ch.posts = append(ch.posts, p)
	s.notifyLocked()
	followers := slices.Clone(ch.followers)
	s.mu.Unlock()
	n := waBinary.Node{Tag: "message", Attrs: waBinary.Attrs{"from": ch.jid, "id": p.id, "server_id": p.serverID,
		"t": p.t.Unix(), "type": p.msgType}, Content: []waBinary.Node{p.plaintextNode()}}
	for _, f := range append(followers, ch.owner) {
		for _, comp := range s.companionsOf(f) {
			if except == nil || comp.conn != except {
				s.deliver(f, comp, n)
			}
		}
	}
	return p.serverID
}

func (p channelPost) plaintextNode() waBinary.Node {
	n := waBinary.Node{Tag: "plaintext", Attrs: waBinary.Attrs{}, Content: p.plaintext}
	if p.mediaType != "" {
		n.Attrs["mediatype"] = p.mediaType
	}
	return n
}

// role is u's part in the channel, as viewer_metadata names it.
func (ch *Channel) roleLocked(u *User) types.NewsletterRole {
	switch {
	case u == ch.owner:
		return types.NewsletterRoleOwner
	case slices.Contains(ch.followers, u):
		return types.NewsletterRoleSubscriber
	}
	return types.NewsletterRoleGuest
}

// metadataLocked is the channel as GraphQL describes it to u; viewer adds
// u's role.
func (ch *Channel) metadataLocked(u *User, viewer bool) *types.NewsletterMetadata {
	m := &types.NewsletterMetadata{ID: ch.jid, State: types.WrappedNewsletterState{Type: types.NewsletterStateActive},
		ThreadMeta: types.NewsletterThreadMetadata{
			InviteCode: ch.invite, SubscriberCount: len(ch.followers),
			Name:              types.NewsletterText{Text: ch.name, ID: strconv.FormatInt(ch.created.Unix(), 10)},
			Description:       types.NewsletterText{Text: ch.description, ID: strconv.FormatInt(ch.created.Unix(), 10)},
			VerificationState: types.NewsletterVerificationStateUnverified,
			Settings:          types.NewsletterSettings{ReactionCodes: types.NewsletterReactionSettings{Value: types.NewsletterReactionsModeAll}},
		}}
	m.ThreadMeta.CreationTime.Time = ch.created
	m.ThreadMeta.Name.UpdateTime.Time, m.ThreadMeta.Description.UpdateTime.Time = ch.created, ch.created
	if viewer {
		m.ViewerMeta = &types.NewsletterViewerMetadata{Mute: types.NewsletterMuteOff, Role: ch.roleLocked(u)}
	}
	return m
}

// errMexNotFound is WhatsApp's GraphQL answer for an unknown channel.
var errMexNotFound = errors.New("404 Not found")

// answerMex answers a GraphQL query of a channel operation.
func (s *Simulator) answerMex(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	q := iq.GetChildByTag("query")
	queryID, _ := q.Attrs["query_id"].(string)
	raw, _ := q.Content.([]byte)
	var req struct {
		Variables struct {
			NewsletterID string `json:"newsletter_id"`
			Input        struct {
				Key  string `json:"key"`
				Type string `json:"type"`
			} `json:"input"`
			FetchViewer bool `json:"fetch_viewer_metadata"`
		} `json:"variables"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, errBadRequest
	}
	v := req.Variables
	s.mu.Lock()
	defer s.mu.Unlock()
	var data map[string]any
	var err error
	switch {
	case queryID == mexFetchChannel || queryID == mexFetchChannelDesk:
		ch := s.channels.byInvite[v.Input.Key]
		if v.Input.Type == string(types.NewsletterKeyTypeJID) {
			ch = s.channels.byJID[types.NewJID(jidUser(v.Input.Key), types.NewsletterServer)]
		}
		if ch == nil {
			err = errMexNotFound
			break
		}
		data = map[string]any{"xwa2_newsletter": ch.metadataLocked(c.user, v.FetchViewer)}
	case (queryID == mexFollow || queryID == mexSubscribedOrFollw) && v.NewsletterID != "":
		data, err = s.followLocked(c.user, v.NewsletterID, true)
	case queryID == mexUnfollow || queryID == mexUnfollowDesk:
		data, err = s.followLocked(c.user, v.NewsletterID, false)
	case queryID == mexSubscribed || queryID == mexSubscribedOrFollw:
		data = map[string]any{"xwa2_newsletter_subscribed": s.subscribedLocked(c.user)}
	default:
		return nil, errNotImplemented
	}
	return []waBinary.Node{{Tag: "result", Content: mexResult(data, err)}}, nil
}

// jidUser is the user part of a JID string.
func jidUser(s string) string {
	jid, err := types.ParseJID(s)
	if err != nil {
		return ""
	}
	return jid.User
}

// mexResult is a GraphQL answer: data, or an error with its code.
func mexResult(data map[string]any, err error) []byte {
	if err != nil {
		out, _ := json.Marshal(map[string]any{"data": nil, "errors": []map[string]any{{"message": "Not found",
			"extensions": map[string]any{"error_code": 404, "is_retryable": false, "severity": "CRITICAL"}}}})
		return out
	}
	out, _ := json.Marshal(map[string]any{"data": data})
	return out
}

// followLocked makes u follow (or unfollow) the channel id names.
func (s *Simulator) followLocked(u *User, id string, follow bool) (map[string]any, error) {
	ch := s.channels.byJID[types.NewJID(jidUser(id), types.NewsletterServer)]
	if ch == nil {
		return nil, errMexNotFound
	}
	ch.followers = slices.DeleteFunc(ch.followers, func(f *User) bool { return f == u })
	if follow && u != ch.owner {
		ch.followers = append(ch.followers, u)
	}
	op := "xwa2_newsletter_leave_v2"
	if follow {
		op = "xwa2_newsletter_join_v2"
	}
	return map[string]any{op: map[string]any{"id": ch.jid}}, nil
}

// subscribedLocked lists the channels u owns or follows, by JID.
func (s *Simulator) subscribedLocked(u *User) []*types.NewsletterMetadata {
	out := []*types.NewsletterMetadata{}
	for _, ch := range s.channels.byJID {
		if ch.owner == u || slices.Contains(ch.followers, u) {
			out = append(out, ch.metadataLocked(u, true))
		}
	}
	slices.SortFunc(out, func(a, b *types.NewsletterMetadata) int { return compareStrings(a.ID.User, b.ID.User) })
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// answerNewsletter answers <iq xmlns="newsletter">: <messages> (get) lists
// a channel's recent posts, newest last; <live_updates> (set) subscribes
// the device to its counters for a while.
func (s *Simulator) answerNewsletter(_ *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	child := iq.GetChildren()[0]
	switch child.Tag {
	case "live_updates":
		return []waBinary.Node{{Tag: "live_updates", Attrs: waBinary.Attrs{"duration": "300"}}}, nil
	case "messages":
	default:
		return nil, errNotImplemented
	}
	ag := child.AttrGetter()
	jid, count, before := ag.JID("jid"), ag.OptionalInt("count"), ag.OptionalInt("before")
	if !ag.OK() {
		return nil, errBadRequest
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels.byJID[jid]
	if ch == nil {
		return nil, errNotFound
	}
	var nodes []waBinary.Node
	for _, p := range ch.posts {
		if before == 0 || p.serverID < before {
			nodes = append(nodes, waBinary.Node{Tag: "message", Attrs: waBinary.Attrs{"server_id": p.serverID, "id": p.id,
				"t": p.t.Unix(), "type": p.msgType}, Content: []waBinary.Node{p.plaintextNode(),
				{Tag: "views_count", Attrs: waBinary.Attrs{"count": len(ch.followers)}}}})
		}
	}
	if count > 0 && len(nodes) > count {
		nodes = nodes[len(nodes)-count:]
	}
	return []waBinary.Node{{Tag: "messages", Attrs: waBinary.Attrs{"jid": jid, "t": time.Now().Unix()}, Content: nodes}}, nil
}

// Channel posts a device sends get this ack error: not the channel's
// owner (WhatsApp answers 401 to a follower's post), or no such channel.
const (
	ackNotChannelAdmin = 401
	ackNoChannel       = 404
)

// handleChannelPost takes a linked device's <message to=channel>: a post
// by the channel's owner is kept and fanned out, and acked with its
// server id.
func (s *Simulator) handleChannelPost(c *conn, n *waBinary.Node, id string, to types.JID) {
	ch, ok := s.LookupChannel(to)
	switch {
	case !ok:
		_ = c.send(messageAck(id, to, ackNoChannel))
		return
	case ch.owner != c.user:
		_ = c.send(messageAck(id, to, ackNotChannelAdmin))
		return
	}
	pt, ok := n.GetOptionalChildByTag("plaintext")
	body, _ := pt.Content.([]byte)
	if !ok || len(body) == 0 {
		_ = c.send(messageAck(id, to, 400))
		return
	}
	msgType, _ := n.Attrs["type"].(string)
	mediaType, _ := pt.Attrs["mediatype"].(string)
	serverID := ch.publish(id, msgType, mediaType, body, c)
	ack := messageAck(id, to, 0)
	ack.Attrs["server_id"] = serverID
	_ = c.send(ack)
}

// channelJSON is a channel in the control API.
type channelJSON struct {
	JID         string   `json:"jid"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Owner       string   `json:"owner"`
	InviteLink  string   `json:"invite_link"`
	Followers   []string `json:"followers"`
	Posts       []string `json:"posts"`
}

func (ch *Channel) toJSON() channelJSON {
	out := channelJSON{JID: ch.jid.String(), Name: ch.name, Description: ch.description, Owner: ch.owner.Number(),
		InviteLink: ch.InviteLink(), Followers: []string{}, Posts: ch.Posts()}
	for _, f := range ch.Followers() {
		out.Followers = append(out.Followers, f.Number())
	}
	return out
}

// apiCreateChannel: POST /v1/channels {owner, name, description?, followers?}.
func (s *Simulator) apiCreateChannel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Owner       string   `json:"owner"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Followers   []string `json:"followers"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	owner, ok := s.LookupUser(req.Owner)
	if !ok || req.Name == "" {
		writeError(w, badRequest("owner must be an existing user and name non-empty"))
		return
	}
	followers := make([]*User, 0, len(req.Followers))
	for _, n := range req.Followers {
		f, ok := s.LookupUser(n)
		if !ok {
			writeError(w, badRequest("followers must list existing users, not %q", n))
			return
		}
		followers = append(followers, f)
	}
	ch := s.CreateChannel(owner, req.Name, req.Description)
	for _, f := range followers {
		ch.Follow(f)
	}
	writeJSON(w, http.StatusCreated, ch.toJSON())
}

// apiListChannels: GET /v1/channels.
func (s *Simulator) apiListChannels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	chs := make([]*Channel, 0, len(s.channels.byJID))
	for _, ch := range s.channels.byJID {
		chs = append(chs, ch)
	}
	s.mu.Unlock()
	slices.SortFunc(chs, func(a, b *Channel) int { return compareStrings(a.jid.User, b.jid.User) })
	out := make([]channelJSON, 0, len(chs))
	for _, ch := range chs {
		out = append(out, ch.toJSON())
	}
	writeJSON(w, http.StatusOK, out)
}

// apiChannelPost: POST /v1/channels/{jid}/posts {text?, media?}: the
// owner's phone posts; answers {server_id}.
func (s *Simulator) apiChannelPost(w http.ResponseWriter, r *http.Request) {
	jid, err := types.ParseJID(r.PathValue("jid"))
	ch, ok := s.LookupChannel(jid)
	if err != nil || !ok {
		writeError(w, &apiError{http.StatusNotFound, "not_found", "no channel " + r.PathValue("jid")})
		return
	}
	var req struct {
		Text  string     `json:"text"`
		Media *mediaJSON `json:"media"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	msg, err := ch.owner.requestMessage(req.Text, req.Media)
	if err != nil {
		writeError(w, err)
		return
	}
	id, err := ch.Post(msg)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"server_id": id})
}

// WaitPosts waits until the channel has n posts.
func (ch *Channel) WaitPosts(ctx context.Context, n int) error {
	return ch.sim.waitFor(ctx, func() bool { return len(ch.posts) >= n })
}

// PostMedia is the file of the channel's post i (0: the oldest) as a
// follower downloads it: a channel's media is stored unencrypted, so these
// are the bytes the poster uploaded. False: no such post, or no file.
func (ch *Channel) PostMedia(i int) ([]byte, bool) {
	ch.sim.mu.Lock()
	if i < 0 || i >= len(ch.posts) {
		ch.sim.mu.Unlock()
		return nil, false
	}
	plaintext := ch.posts[i].plaintext
	ch.sim.mu.Unlock()
	var msg waE2E.Message
	if proto.Unmarshal(plaintext, &msg) != nil {
		return nil, false
	}
	path := orDefault(msg.GetImageMessage().GetDirectPath(), orDefault(msg.GetVideoMessage().GetDirectPath(),
		orDefault(msg.GetAudioMessage().GetDirectPath(), msg.GetDocumentMessage().GetDirectPath())))
	if path == "" {
		return nil, false
	}
	return ch.sim.media.byDirectPath(path, false)
}
