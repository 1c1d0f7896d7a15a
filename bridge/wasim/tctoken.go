package wasim

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Trusted-contact tokens, as whatsmeow (tctoken.go, notification.go) and
// WhatsApp use them: when a person writes to an account, their phone issues
// the account a privacy token, which the server hands to the account's
// devices as
//
//	<notification type="privacy_token" from sender_lid><tokens>
//	  <token jid t type="trusted_contact">…</token></tokens></notification>
//
// and the account's devices attach it to what they send that person
// (<message><tctoken>…</tctoken></message>). WhatsApp's reach-out time lock
// refuses, with 463, a message to someone who gave the account no token: a
// first message to a stranger. The simulator always issues tokens; it
// refuses messages without one only when RequireTrustedContactTokens is on
// (off by default, as most tests write to contacts that never wrote first).

// trustKey is a token's issuer and the account it trusts.
type trustKey struct{ issuer, holder *User }

// trustTokens are the tokens phones issued; guarded by the simulator's mu.
type trustTokens struct {
	required bool
	issued   map[trustKey][]byte
}

// RequireTrustedContactTokens makes the server refuse (463) a client's
// message to a person who issued its account no trusted-contact token.
func (s *Simulator) RequireTrustedContactTokens(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trust.required = on
}

// issueTrustToken is the phone of issuer writing to holder: the first time,
// it issues holder a token, which reaches holder's devices before the
// message does.
func (s *Simulator) issueTrustToken(issuer, holder *User) {
	s.mu.Lock()
	key := trustKey{issuer: issuer, holder: holder}
	if s.trust.issued[key] != nil || issuer == holder {
		s.mu.Unlock()
		return
	}
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	if s.trust.issued == nil {
		s.trust.issued = map[trustKey][]byte{}
	}
	s.trust.issued[key] = token
	s.mu.Unlock()
	now := time.Now().Unix()
	note := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": issuer.jid, "sender_lid": issuer.lid, "type": "privacy_token", "id": randomBase64(9), "t": now,
	}, Content: []waBinary.Node{{Tag: "tokens", Content: []waBinary.Node{{
		Tag: "token", Attrs: waBinary.Attrs{"jid": holder.jid, "t": now, "type": "trusted_contact"}, Content: token,
	}}}}}
	for _, comp := range s.companionsOf(holder) {
		s.deliver(holder, comp, note)
	}
}

// lacksTrustToken reports whether a client's message must be refused for
// want of the recipient's trusted-contact token.
func (s *Simulator) lacksTrustToken(c *conn, n *waBinary.Node, to types.JID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.trust.required || (to.Server != types.DefaultUserServer && to.Server != types.HiddenUserServer) {
		return false
	}
	recipient := s.userByJIDLocked(to.ToNonAD())
	if recipient == nil || recipient == c.user {
		return false
	}
	want := s.trust.issued[trustKey{issuer: recipient, holder: c.user}]
	got, _ := n.GetChildByTag("tctoken").Content.([]byte)
	return want == nil || !bytes.Equal(got, want)
}

// apiTrustedContactTokens answers PUT /v1/trusted-contact-tokens
// {"required": true|false} (RequireTrustedContactTokens).
func (s *Simulator) apiTrustedContactTokens(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Required *bool `json:"required"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Required == nil {
		writeError(w, badRequest("required (true or false) is missing"))
		return
	}
	s.RequireTrustedContactTokens(*req.Required)
	writeJSON(w, http.StatusOK, map[string]bool{"required": *req.Required})
}
