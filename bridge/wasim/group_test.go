package wasim_test

import (
	"bytes"
	"context"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

func TestGroups(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915400000001")
	alice := sim.Contact("4915400000002", "Alice")
	bob := sim.Contact("4915400000003", "Bob")
	outsider := sim.Contact("4915400000004", "Olga")
	team := sim.CreateGroup("Team", alice, phone, bob)
	sim.CreateGroup("Not mine", alice, outsider)
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)

	groups, err := tc.GetJoinedGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].JID != team.JID() || groups[0].Name != "Team" || len(groups[0].Participants) != 3 {
		t.Fatalf("joined groups %+v", groups)
	}
	info, err := tc.GetGroupInfo(ctx, team.JID())
	if err != nil || info.OwnerJID != alice.JID() {
		t.Fatalf("group info %+v, %v", info, err)
	}

	// Sender keys: each member's phone decrypts the SenderKeyDistributionMessage
	// from its pkmsg and then the skmsg.
	id := sendText(t, tc, team.JID(), "hello team")
	for _, member := range []*wasim.User{alice, bob} {
		m := waitMessage(t, member, id)
		if m.Text() != "hello team" || m.EncType != "skmsg" || m.Chat != team.JID() {
			t.Fatalf("%s got %q as %s in %s", member.Name(), m.Text(), m.EncType, m.Chat)
		}
	}
	id2 := sendText(t, tc, team.JID(), "second")
	if m := waitMessage(t, bob, id2); m.Text() != "second" {
		t.Fatalf("bob got %q", m.Text())
	}
	if got := outsider.Received(); len(got) != 0 {
		t.Fatalf("outsider received %d messages", len(got))
	}
	// Group receipts name the participant.
	r := wasimtest.WaitEvent(t, tc, func(r *events.Receipt) bool { return r.MessageIDs[0] == id && r.Sender.User == bob.JID().User })
	if r.Chat != team.JID() || !r.IsGroup || r.Type != types.ReceiptTypeDelivered {
		t.Fatalf("group receipt %+v", r)
	}

	// A member writes to the group. As from a real phone, the stanza has the
	// sender key in a pkmsg and the text in an skmsg; whatsmeow emits an
	// events.Message for each, the first holding only the
	// SenderKeyDistributionMessage.
	in, err := alice.SendText(ctx, team.JID(), "hi all")
	if err != nil {
		t.Fatal(err)
	}
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool {
		return m.Info.ID == in && m.Message.GetSenderKeyDistributionMessage() == nil
	})
	if m.Message.GetConversation() != "hi all" || m.Info.Chat != team.JID() || m.Info.Sender != alice.JID() || !m.Info.IsGroup {
		t.Fatalf("group message %q %+v", m.Message.GetConversation(), m.Info.MessageSource)
	}
	if _, err := tc.GetGroupInfo(ctx, types.NewJID("120363999999999999", types.GroupServer)); err == nil {
		t.Fatal("info of an unknown group")
	}
}

// Every member's phone opens a group attachment; none may spoil it for the
// next (a regression: decryption once happened in place in the stored blob).
func TestGroupImageReachesEveryMember(t *testing.T) {
	sim := wasim.Start(t)
	phone := sim.Phone("4915500000099")
	tc := wasimtest.LinkByQR(t, sim, phone)
	alice, bob := sim.Contact("4915500000098", "Alice"), sim.Contact("4915500000097", "Bob")
	g := sim.CreateGroup("Media", phone, alice, bob)
	data := bytes.Repeat([]byte{1, 2, 3}, 1000)
	up, err := tc.Upload(context.Background(), data, whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tc.SendMessage(context.Background(), g.JID(), &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey, Mimetype: proto.String("image/png"),
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, member := range []*wasim.User{alice, bob} {
		m, err := member.WaitMessage(context.Background(), resp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Media == nil || m.Media.Err != nil || !bytes.Equal(m.Media.Data, data) {
			t.Errorf("%s got %+v", member.JID(), m.Media)
		}
	}
}
