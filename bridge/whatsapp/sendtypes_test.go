package whatsapp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Minimal files of each kind: the session sends what the API validated,
// so only their bytes matter here.
var (
	testMP4  = append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), bytes.Repeat([]byte{7}, 64)...)
	testOpus = append([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x13OpusHead"),
		bytes.Repeat([]byte{9}, 64)...)
)

// fakeQuotes knows the messages of quotes by WhatsApp id.
type fakeQuotes map[string]bridge.Quoted

func (f fakeQuotes) Quoted(_ context.Context, _ bridge.Recipient, id string) (bridge.Quoted, bool, error) {
	q, ok := f[id]
	return q, ok, nil
}

// sendOut sends out through the linked session and returns what the
// simulated user's phone decrypted of it.
func sendOut(t *testing.T, r *running, to *wasim.User, out bridge.Outgoing) *wasim.Message {
	t.Helper()
	out.ID = r.NewMessageID()
	if err := r.Send(context.Background(), out); err != nil {
		t.Fatalf("send %s: %v", out.Type, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()
	m, err := to.WaitMessage(ctx, out.ID)
	if err != nil || m.Err != nil {
		t.Fatalf("%s did not read %s: %v %v", to.JID(), out.Type, err, m)
	}
	return m
}

func spoolFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Each content type reaches the contact decrypted, with its fields.
func TestSendEachContentType(t *testing.T) {
	testutil.SkipIfShort(t, "simulator")
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	alice := sim.Contact("4915100000002", "Alice")
	to := bridge.PhoneRecipient(alice.Number())

	video := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeVideo, Text: "the clip",
		FilePath: spoolFile(t, testMP4), MimeType: "video/mp4"})
	if v := video.Media; v == nil || v.Err != nil || v.Kind != "video" || !bytes.Equal(v.Data, testMP4) ||
		v.Caption != "the clip" || v.MimeType != "video/mp4" {
		t.Errorf("video: %+v", v)
	}
	voice := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeAudio, PTT: true,
		FilePath: spoolFile(t, testOpus), MimeType: "audio/ogg; codecs=opus"})
	if a := voice.Media; a == nil || a.Err != nil || a.Kind != "audio" || !a.PTT || !bytes.Equal(a.Data, testOpus) ||
		a.MimeType != "audio/ogg; codecs=opus" {
		t.Errorf("voice note: %+v", a)
	}
	song := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeAudio,
		FilePath: spoolFile(t, []byte("ID3\x04 an mp3")), MimeType: "audio/mpeg"})
	if a := song.Media; a == nil || a.Err != nil || a.PTT || a.MimeType != "audio/mpeg" {
		t.Errorf("audio: %+v", a)
	}
	place := bridge.Location{Latitude: 52.520008, Longitude: -13.404954, Name: "Tor", Address: "Pariser Platz, Berlin"}
	loc := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeLocation, Location: &place}).Location()
	if loc.GetDegreesLatitude() != place.Latitude || loc.GetDegreesLongitude() != place.Longitude ||
		loc.GetName() != place.Name || loc.GetAddress() != place.Address {
		t.Errorf("location: %v", loc)
	}
	card := bridge.ContactCard{DisplayName: "Bob", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nTEL:+4915100000003\nEND:VCARD"}
	c := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeContact, Contact: &card}).Contact()
	if c.GetDisplayName() != "Bob" || c.GetVcard() != card.VCard {
		t.Errorf("contact: %v", c)
	}
}

// A reply quotes the right message: one the bridge sent (its text, the
// account as author) and one the contact sent (the contact as author);
// mentions in a group reach every member.
func TestSendReplyAndMentions(t *testing.T) {
	testutil.SkipIfShort(t, "simulator")
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	alice, bob := sim.Contact("4915100000002", "Alice"), sim.Contact("4915100000003", "Bob")
	to := bridge.PhoneRecipient(alice.Number())
	quotes := fakeQuotes{}
	r.opts.Quotes = quotes

	question := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeText, Text: "Which size?"})
	quotes[question.ID] = bridge.Quoted{Text: "Which size?"}
	reply := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeText, Text: "Still there?", ReplyTo: question.ID})
	q := reply.Quoted()
	if reply.Text() != "Still there?" || q == nil || q.ID != question.ID || q.Participant != account+"@s.whatsapp.net" ||
		q.Message.GetConversation() != "Which size?" {
		t.Errorf("reply to our own message: %q quoting %+v", reply.Text(), q)
	}

	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()
	theirs, err := alice.SendText(ctx, types.NewJID(account, types.DefaultUserServer), "Size M please")
	if err != nil {
		t.Fatal(err)
	}
	answer := sendOut(t, r, alice, bridge.Outgoing{Recipient: to, Type: bridge.TypeImage, Text: "Here it is",
		FilePath: spoolFile(t, []byte("\x89PNG\r\n\x1a\nimage")), MimeType: "image/png", ReplyTo: theirs})
	if q := answer.Quoted(); q == nil || q.ID != theirs || q.Participant != alice.JID().String() || answer.Media.Caption != "Here it is" {
		t.Errorf("reply to the contact's message: %+v", q)
	}

	group := sim.CreateGroup("Team", sim.Phone(account), alice, bob)
	gr, err := bridge.RecipientFromJID(group.JID().String())
	if err != nil {
		t.Fatal(err)
	}
	mentions := []bridge.Recipient{to, bridge.PhoneRecipient(bob.Number())}
	out := bridge.Outgoing{Recipient: gr, Type: bridge.TypeText, Text: "@4915100000002 @4915100000003 meeting at 3", Mentions: mentions}
	atAlice := sendOut(t, r, alice, out)
	want := []string{alice.JID().String(), bob.JID().String()}
	if !slices.Equal(atAlice.Mentions(), want) || atAlice.Chat != group.JID() {
		t.Errorf("alice got mentions %v in %s, want %v", atAlice.Mentions(), atAlice.Chat, want)
	}
	atBob, err := bob.WaitMessage(ctx, atAlice.ID)
	if err != nil || !slices.Equal(atBob.Mentions(), want) {
		t.Errorf("bob got %v: %v", atBob, err)
	}
}
