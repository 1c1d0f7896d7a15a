package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

func (f *fakeEvents) GroupChanged(_ context.Context, _ *sql.Tx, c bridge.GroupChange) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups = append(f.groups, c)
	return nil
}

// waitGroupChange waits for a reported group change that matches.
func (f *fakeEvents) waitGroupChange(t *testing.T, what string, match func(bridge.GroupChange) bool) bridge.GroupChange {
	t.Helper()
	return testutil.Poll(t, 20*time.Second, func() (bridge.GroupChange, bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.groups {
			if match(c) {
				return c, true
			}
		}
		return bridge.GroupChange{}, false
	}, "waiting for %s", what)
}

func groupOf(t *testing.T, id string) bridge.Recipient {
	t.Helper()
	g, err := bridge.RecipientFromJID(id)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The account administers groups through the real client against the
// simulator: a result per participant, info changes, links, rights; the
// changes come back as group changes.
func TestGroupAdministration(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, alice := linked(t)
	ctx := waitCtx(t)
	bob, carol := sim.Contact("4915100000003", "Bob"), sim.Contact("4915100000004", "Carol")
	carol.RefuseGroupAdds(true)

	if before, err := r.Groups(ctx); err != nil || len(before) != 0 { // and cached
		t.Fatalf("groups before: %v %v", before, err)
	}
	info, results, err := r.CreateGroup(ctx, "Ops", []bridge.Recipient{bridge.PhoneRecipient(alice.Number()), bridge.PhoneRecipient(carol.Number())})
	if err != nil || info.Subject != "Ops" || len(info.Members) != 2 {
		t.Fatalf("create: %+v %v", info, err)
	}
	if results[0].Outcome != bridge.MemberDone || results[1].Outcome != bridge.MemberPrivacyRefused {
		t.Fatalf("create results %+v", results)
	}
	group := groupOf(t, info.ID)
	if after, err := r.Groups(ctx); err != nil || len(after) != 1 || after[0].Subject != "Ops" {
		t.Fatalf("the list of groups after the create: %v %v", after, err)
	}
	r.events.waitGroupChange(t, "the create", func(c bridge.GroupChange) bool { return c.Created && c.Group == group })

	results, err = r.ChangeMembers(ctx, group, bridge.MemberAdd, []bridge.Recipient{
		{Kind: bridge.RecipientLID, ID: bob.LID().User}, bridge.PhoneRecipient("4915199999999"), bridge.PhoneRecipient(alice.Number())})
	if err != nil || results[0].Outcome != bridge.MemberDone || results[0].Phone != bob.Number() ||
		results[1].Outcome != bridge.MemberNotOnWhatsApp || results[2].Outcome != bridge.MemberAlreadyIn {
		t.Fatalf("add: %+v %v", results, err)
	}
	joined := r.events.waitGroupChange(t, "bob's join", func(c bridge.GroupChange) bool {
		return c.MemberAction == bridge.MemberAdd && !c.Created && c.Group == group
	})
	if joined.By.ID != account || len(joined.Members) != 1 || joined.Members[0].LID != bob.LID().String() {
		t.Fatalf("join change %+v", joined)
	}
	if res, err := r.ChangeMembers(ctx, group, bridge.MemberPromote, []bridge.Recipient{bridge.PhoneRecipient(alice.Number())}); err != nil || res[0].Outcome != bridge.MemberDone {
		t.Fatalf("promote: %+v %v", res, err)
	}
	if err := r.SetGroupSubject(ctx, group, "Ops team"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetGroupDescription(ctx, group, "on call"); err != nil {
		t.Fatal(err)
	}
	g, _ := sim.LookupGroup(sim.Groups()[0].JID())
	g.SetSubject(alice, "Alice's name")
	renamed := r.events.waitGroupChange(t, "alice's rename", func(c bridge.GroupChange) bool {
		return c.Subject != nil && *c.Subject == "Alice's name"
	})
	if renamed.By.ID != alice.Number() {
		t.Fatalf("renamed by %+v", renamed.By)
	}
	if id, err := r.SetGroupPhoto(ctx, group, []byte{0xff, 0xd8, 0xff, 0xe0, 0}); err != nil || id == "" {
		t.Fatalf("photo %q: %v", id, err)
	}
	if _, err := r.SetGroupPhoto(ctx, group, []byte("GIF89a")); !errors.Is(err, bridge.ErrPhotoRefused) {
		t.Fatalf("a GIF: %v", err)
	}
	r.events.waitGroupChange(t, "the photo", func(c bridge.GroupChange) bool { return c.Photo == "set" })

	got, err := r.GroupInfo(ctx, group)
	if err != nil || got.Description != "on call" || len(got.Members) != 3 || got.Owner != account {
		t.Fatalf("info %+v %v", got, err)
	}
	link, err := r.InviteLink(ctx, group, false)
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err := r.InviteLink(ctx, group, true); err != nil || fresh == link {
		t.Fatalf("reset: %q %v", fresh, err)
	}
	code, _ := bridge.ParseInviteLink(link)
	if _, err := r.JoinGroup(ctx, code); !errors.Is(err, bridge.ErrInviteRevoked) {
		t.Fatalf("join by a revoked link: %v", err)
	}
	testNotAdmin(ctx, t, sim, r, alice, bob)
}

// In a group where the account is only a member, admin actions are
// refused as such; the account can still join by link and leave.
func testNotAdmin(ctx context.Context, t *testing.T, sim *wasim.Simulator, r *running, alice, bob *wasim.User) {
	t.Helper()
	theirs := sim.CreateGroup("Alice's", alice, sim.Phone(account))
	group := groupOf(t, theirs.JID().String())
	if _, err := r.ChangeMembers(ctx, group, bridge.MemberAdd, []bridge.Recipient{bridge.PhoneRecipient(bob.Number())}); !errors.Is(err, bridge.ErrNotGroupAdmin) {
		t.Fatalf("add as a member: %v", err)
	}
	if _, err := r.InviteLink(ctx, group, false); !errors.Is(err, bridge.ErrNotGroupAdmin) {
		t.Fatalf("link as a member: %v", err)
	}
	if err := r.LeaveGroup(ctx, group); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GroupInfo(ctx, group); !errors.Is(err, bridge.ErrNotGroupMember) {
		t.Fatalf("info after leaving: %v", err)
	}
	open := sim.CreateGroup("Open", alice)
	joined, err := r.JoinGroup(ctx, open.InviteCode())
	if err != nil || joined.JID() != open.JID().String() {
		t.Fatalf("join: %v %v", joined, err)
	}
}

// BenchmarkGroupAction is the baseline of the group pace's figure: member
// changes (a promote or a demote, alternately) through the real client
// against the simulator, unpaced.
func BenchmarkGroupAction(b *testing.B) {
	sim := wasim.Start(b)
	r := start(b, sim, newBridgeFiles(b))
	linkByQR(b, sim, r)
	alice := sim.Contact("4915100000002", "Alice")
	g := sim.CreateGroup("Bench", sim.Phone(account), alice)
	group, _ := bridge.RecipientFromJID(g.JID().String())
	ps := []bridge.Recipient{bridge.PhoneRecipient(alice.Number())}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		action := bridge.MemberPromote
		if i%2 == 1 {
			action = bridge.MemberDemote
		}
		if res, err := r.ChangeMembers(ctx, group, action, ps); err != nil || res[0].Outcome != bridge.MemberDone {
			b.Fatalf("%s: %+v %v", action, res, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Minutes(), "actions/min")
}

// A group GroupInfo read is served from memory (CachedGroupInfo) without
// asking WhatsApp, until WhatsApp tells of a change by someone else or the
// account acts on the group itself.
func TestGroupInfoCachedUntilItChanges(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, r, alice := linked(t)
	ctx := waitCtx(t)
	created, _, err := r.CreateGroup(ctx, "Ops", []bridge.Recipient{bridge.PhoneRecipient(alice.Number())})
	if err != nil {
		t.Fatal(err)
	}
	group := groupOf(t, created.ID)
	r.events.waitGroupChange(t, "the create", func(c bridge.GroupChange) bool { return c.Created && c.Group == group })
	if _, ok := r.CachedGroupInfo(group); ok {
		t.Fatal("a group never read is cached")
	}
	read := func(subject string) {
		t.Helper()
		asked := sim.GroupInfoQueries()
		if info, err := r.GroupInfo(ctx, group); err != nil || info.Subject != subject {
			t.Fatalf("read: %+v %v, want subject %q", info, err, subject)
		}
		if cached, ok := r.CachedGroupInfo(group); !ok || cached.Subject != subject || len(cached.Members) != 2 {
			t.Fatalf("after a read: cached %+v %v", cached, ok)
		}
		if n := sim.GroupInfoQueries() - asked; n != 1 {
			t.Fatalf("a read asked WhatsApp %d times, want once", n)
		}
	}
	read("Ops")

	jid, _ := types.ParseJID(created.ID)
	g, ok := sim.LookupGroup(jid)
	if !ok {
		t.Fatalf("the simulator has no group %s", created.ID)
	}
	g.SetSubject(alice, "Renamed")
	r.events.waitGroupChange(t, "alice's rename", func(c bridge.GroupChange) bool { return c.Subject != nil && *c.Subject == "Renamed" })
	if _, ok := r.CachedGroupInfo(group); ok {
		t.Error("still cached after WhatsApp told of a change")
	}
	read("Renamed")

	if err := r.SetGroupSubject(ctx, group, "Mine"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.CachedGroupInfo(group); ok {
		t.Error("still cached after the account changed the group")
	}
}

// A group read is fresh for groupsCacheFor, then asked again.
func TestGroupInfoCacheExpires(t *testing.T) {
	var g groupList
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	g.keepInfo("1@g.us", bridge.GroupInfo{Subject: "Ops"}, now)
	if info, ok := g.freshInfo("1@g.us", now.Add(groupsCacheFor-time.Millisecond)); !ok || info.Subject != "Ops" {
		t.Errorf("within %s: %+v %v", groupsCacheFor, info, ok)
	}
	if _, ok := g.freshInfo("1@g.us", now.Add(groupsCacheFor)); ok {
		t.Errorf("served after %s", groupsCacheFor)
	}
	g.keepInfo("2@g.us", bridge.GroupInfo{}, now.Add(groupsCacheFor))
	if len(g.infos) != 1 {
		t.Errorf("the stale entry is kept: %v", g.infos)
	}
}
