package wasim_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// The real whatsmeow client administers groups against the simulator: a
// result per participant, rights, invite links, and the w:gp2
// notifications that members' devices turn into events.
func TestGroupAdministration(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915600000001")
	alice := sim.Contact("4915600000002", "Alice")
	bob := sim.Contact("4915600000003", "Bob")
	carol := sim.Contact("4915600000004", "Carol")
	carol.RefuseGroupAdds(true)
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)

	info, err := tc.CreateGroup(ctx, whatsmeow.ReqCreateGroup{Name: "Ops", Participants: []types.JID{alice.JID(), carol.JID()}})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := sim.LookupGroup(info.JID)
	if !ok || g.Subject() != "Ops" || len(g.Members()) != 2 || !g.IsAdmin(phone) {
		t.Fatalf("created %+v", info)
	}
	var refused bool
	for _, p := range info.Participants {
		refused = refused || (p.JID == carol.JID() && p.Error == 403 && p.AddRequest != nil)
	}
	if !refused {
		t.Fatalf("carol's privacy refusal missing: %+v", info.Participants)
	}
	wasimtest.WaitEvent(t, tc, func(e *events.JoinedGroup) bool { return e.JID == info.JID })

	// One result per participant: added, not on WhatsApp, already in.
	res, err := tc.UpdateGroupParticipants(ctx, info.JID, []types.JID{bob.JID(), types.NewJID("4915699999999", types.DefaultUserServer), alice.JID()}, whatsmeow.ParticipantChangeAdd)
	if err != nil || len(res) != 3 || res[0].Error != 0 || res[0].LID != bob.LID() || res[1].Error != 404 || res[2].Error != 409 {
		t.Fatalf("add: %+v, %v", res, err)
	}
	ev := wasimtest.WaitEvent(t, tc, func(e *events.GroupInfo) bool { return e.JID == info.JID && len(e.Join) > 0 })
	if ev.Join[0] != bob.JID() || *ev.Sender != phone.JID() {
		t.Fatalf("join event %+v", ev)
	}
	if _, err := tc.UpdateGroupParticipants(ctx, info.JID, []types.JID{bob.JID()}, whatsmeow.ParticipantChangePromote); err != nil || !g.IsAdmin(bob) {
		t.Fatalf("promote: %v", err)
	}

	// Info changes by the client and by a member's phone.
	if err := tc.SetGroupName(ctx, info.JID, "Ops team"); err != nil || g.Subject() != "Ops team" {
		t.Fatalf("subject: %v", err)
	}
	if err := tc.SetGroupTopic(ctx, info.JID, "", "", "on call"); err != nil || g.Description() != "on call" {
		t.Fatalf("description: %v", err)
	}
	g.SetSubject(alice, "Ops (alice)")
	sub := wasimtest.WaitEvent(t, tc, func(e *events.GroupInfo) bool { return e.Name != nil && e.Name.Name == "Ops (alice)" })
	if *sub.Sender != alice.JID() {
		t.Fatalf("subject event %+v", sub)
	}
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0, 1, 2, 3}
	if id, err := tc.SetGroupPhoto(ctx, info.JID, jpeg); err != nil || id != g.PhotoID() {
		t.Fatalf("photo %q: %v", id, err)
	}
	if _, err := tc.SetGroupPhoto(ctx, info.JID, []byte("png")); !errors.Is(err, whatsmeow.ErrInvalidImageFormat) {
		t.Fatalf("a photo that is no JPEG: %v", err)
	}

	// Invite links: read, revoke; the old code is gone.
	link, err := tc.GetGroupInviteLink(ctx, info.JID, false)
	if err != nil || link != whatsmeow.InviteLinkPrefix+g.InviteCode() {
		t.Fatalf("link %q: %v", link, err)
	}
	fresh, err := tc.GetGroupInviteLink(ctx, info.JID, true)
	if err != nil || fresh == link {
		t.Fatalf("reset link %q: %v", fresh, err)
	}

	// A group where the account is a member, not an admin.
	other := sim.CreateGroup("Alice's", alice, phone)
	if _, err := tc.UpdateGroupParticipants(ctx, other.JID(), []types.JID{bob.JID()}, whatsmeow.ParticipantChangeAdd); !errors.Is(err, whatsmeow.ErrIQNotAuthorized) {
		t.Fatalf("add as a member: %v", err)
	}
	if _, err := tc.GetGroupInviteLink(ctx, other.JID(), false); !errors.Is(err, whatsmeow.ErrGroupInviteLinkUnauthorized) {
		t.Fatalf("link as a member: %v", err)
	}
	if err := tc.LeaveGroup(ctx, other.JID()); err != nil || len(other.Members()) != 1 {
		t.Fatalf("leave: %v", err)
	}
	// Join by link; a revoked link is refused.
	third := sim.CreateGroup("Open", alice)
	if _, err := tc.JoinGroupWithLink(ctx, "https://chat.whatsapp.com/"+strings.Repeat("x", 22)); !errors.Is(err, whatsmeow.ErrInviteLinkInvalid) {
		t.Fatalf("unknown link: %v", err)
	}
	joined, err := tc.JoinGroupWithLink(ctx, whatsmeow.InviteLinkPrefix+third.InviteCode())
	if err != nil || joined != third.JID() || len(third.Members()) != 2 {
		t.Fatalf("join %s: %v", joined, err)
	}
	if _, err := tc.JoinGroupWithLink(ctx, link); !errors.Is(err, whatsmeow.ErrInviteLinkRevoked) {
		t.Fatalf("revoked link: %v", err)
	}
	// A member's phone removes the account: its client hears of it.
	other2 := sim.CreateGroup("Kick", alice, phone)
	other2.ChangeMembers(alice, "remove", phone)
	wasimtest.WaitEvent(t, tc, func(e *events.GroupInfo) bool { return e.JID == other2.JID() && len(e.Leave) == 1 })
	wasimtest.Settle(t, sim)
}

// The control API drives group changes by phones: a linked client hears of
// them; a user's privacy refuses adds.
func TestControlAPIGroups(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	phone := sim.Phone("4915700000001")
	tc := wasimtest.LinkByQR(t, sim, phone)
	sim.Contact("4915700000002", "Alice")
	sim.Contact("4915700000003", "Bob")
	var g struct{ JID string }
	api(t, srv.URL, "POST", "/v1/groups", map[string]any{"subject": "Team", "owner": "4915700000002", "members": []string{"4915700000001"}}, 201, &g)
	api(t, srv.URL, "POST", "/v1/users/4915700000003/group-privacy", map[string]bool{"refuse_adds": true}, 200, nil)
	var res struct{ Codes []int }
	api(t, srv.URL, "POST", "/v1/groups/"+g.JID+"/members", map[string]any{"by": "4915700000002", "action": "add", "members": []string{"4915700000003"}}, 200, &res)
	if len(res.Codes) != 1 || res.Codes[0] != 403 {
		t.Fatalf("add of a refusing user: %+v", res)
	}
	api(t, srv.URL, "POST", "/v1/groups/"+g.JID+"/members", map[string]any{"by": "4915700000002", "action": "promote", "members": []string{"4915700000001"}}, 200, &res)
	wasimtest.WaitEvent(t, tc, func(e *events.GroupInfo) bool { return len(e.Promote) == 1 && e.Promote[0] == phone.JID() })
	api(t, srv.URL, "POST", "/v1/groups/"+g.JID+"/subject", map[string]any{"by": "4915700000001", "subject": "Renamed"}, 200, nil)
	wasimtest.WaitEvent(t, tc, func(e *events.GroupInfo) bool { return e.Name != nil && e.Name.Name == "Renamed" })
	api(t, srv.URL, "POST", "/v1/groups/"+g.JID+"/members", map[string]any{"by": "4915700000003", "action": "add", "members": []string{"4915700000001"}}, 409, nil)
	api(t, srv.URL, "POST", "/v1/groups/120363000000000009@g.us/subject", map[string]any{"by": "4915700000001", "subject": "x"}, 404, nil)
	wasimtest.Settle(t, sim)
}
