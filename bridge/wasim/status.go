package wasim

import (
	"context"
	"errors"
	"net/http"

	"google.golang.org/protobuf/proto"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// Statuses ("stories") travel as WhatsApp sends them: a message to
// status@broadcast encrypted with the poster's sender key for that
// broadcast, fanned out by the server to each recipient's devices as
//
//	<message from="status@broadcast" participant=poster id t type><enc pkmsg|msg/><enc skmsg/></message>
//
// A client posts one with <message to="status@broadcast"> and a
// <participants> list of the recipients' devices (whatsmeow takes them from
// the status privacy setting, which the server answers, or from the list the
// caller names); receipts come back from status@broadcast with the reader as
// participant.

// sharesSenderKey reports a chat whose messages are encrypted once with the
// sender's sender key: a group, or a broadcast (the status).
func sharesSenderKey(chat types.JID) bool {
	return chat.Server == types.GroupServer || chat.Server == types.BroadcastServer
}

// ErrNoAudience is returned when a status names no one to see it.
var ErrNoAudience = errors.New("wasim: a status needs at least one recipient")

// PostStatus posts msg as the user's status, seen by audience: each
// recipient's linked devices get it from status@broadcast with the user as
// participant, as a phone's status reaches a linked device. whatsmeow emits
// events.Message with Info.Chat types.StatusBroadcastJID.
func (u *User) PostStatus(ctx context.Context, msg *waE2E.Message, audience ...*User) (types.MessageID, error) {
	if msg == nil {
		return "", errors.New("wasim: nil message")
	}
	if len(audience) == 0 {
		return "", ErrNoAudience
	}
	plaintext, err := proto.Marshal(msg)
	if err != nil {
		return "", err
	}
	id := newMessageID()
	msgType, mediaType := classify(msg)
	return id, u.sim.sendWithSenderKey(ctx, u, types.StatusBroadcastJID, audience, id, msgType, mediaType, plaintext)
}

// PostMediaStatus uploads a's file and posts it as the user's status (see
// PostStatus); a.Caption is the status's text.
func (u *User) PostMediaStatus(ctx context.Context, a Attachment, audience ...*User) (types.MessageID, error) {
	msg, err := u.uploadAttachment(a)
	if err != nil {
		return "", err
	}
	return u.PostStatus(ctx, msg, audience...)
}

// SetStatusAudience sets the user's status privacy setting to a whitelist
// of audience ("only share with…"); none: back to "my contacts", WhatsApp's
// default. A client that asks (whatsmeow's GetStatusPrivacy, before a status
// post that names no recipients) gets it.
func (u *User) SetStatusAudience(audience ...*User) {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.statusAudience = append([]*User(nil), audience...)
}

// answerStatusPrivacy answers <iq xmlns="status" type="get"><privacy/></iq>
// with the user's setting:
//
//	<privacy><list type="contacts|whitelist" default="true">[<user jid/>…]</list></privacy>
func (s *Simulator) answerStatusPrivacy(c *conn) []waBinary.Node {
	s.mu.Lock()
	audience := c.user.statusAudience
	s.mu.Unlock()
	list := waBinary.Node{Tag: "list", Attrs: waBinary.Attrs{"type": string(types.StatusPrivacyTypeContacts), "default": "true"}}
	if audience != nil {
		list.Attrs["type"] = string(types.StatusPrivacyTypeWhitelist)
		users := make([]waBinary.Node, 0, len(audience))
		for _, a := range audience {
			users = append(users, waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": a.jid}})
		}
		list.Content = users
	}
	return []waBinary.Node{{Tag: "privacy", Content: []waBinary.Node{list}}}
}

// apiPostStatus: POST /v1/users/{number}/status {to: [numbers], text?,
// media?}: the user posts a status that the users to see (each must exist).
func (s *Simulator) apiPostStatus(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		To    []string   `json:"to"`
		Text  string     `json:"text"`
		Media *mediaJSON `json:"media"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	audience := make([]*User, 0, len(req.To))
	for _, n := range req.To {
		a, ok := s.LookupUser(n)
		if !ok {
			writeError(w, badRequest("to must list existing users, not %q", n))
			return
		}
		audience = append(audience, a)
	}
	if len(audience) == 0 {
		writeError(w, badRequest("to must list the users who see the status"))
		return
	}
	msg, err := u.requestMessage(req.Text, req.Media)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	id, err := u.PostStatus(ctx, msg, audience...)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
}
