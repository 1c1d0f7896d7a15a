package wasim_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// The control API lets a person try every conversation feature with curl:
// a contact who hides their number, a voice note, and what the contact
// received (a reply quoting a photo, mentions, a reaction, an edit, a
// revoke) and the ticks the account sent.
func TestControlAPIConversation(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	base, ctx := srv.URL, wasimtest.Context(t)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915600000001", "name": "Me"}, 201, nil)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915600000002", "name": "Kim", "receipt_mode": "none"}, 201, nil)
	tc := wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) { wasimclient.Configure(cli, sim.Addr()) })
	item, _ := wasimtest.ConnectForQR(t, ctx, tc)
	api(t, base, "POST", "/v1/users/4915600000001/scan", map[string]string{"qr": item.Code}, 200, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	kim, _ := sim.LookupUser("4915600000002")

	// A voice note, then a photo.
	var sent struct {
		ID string `json:"id"`
	}
	api(t, base, "POST", "/v1/users/4915600000002/messages", map[string]any{"to": "4915600000001", "media": map[string]any{
		"kind": "audio", "mimetype": "audio/ogg", "ptt": true, "data_base64": base64.StdEncoding.EncodeToString([]byte("OggS voice")),
	}}, 200, &sent)
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == sent.ID })
	if !m.Message.GetAudioMessage().GetPTT() {
		t.Errorf("the voice note arrived as %v", m.Message)
	}
	api(t, base, "POST", "/v1/users/4915600000002/messages", map[string]any{"to": "4915600000001", "media": map[string]any{
		"kind": "image", "mimetype": "image/png", "caption": "look", "data_base64": base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n")),
	}}, 200, &sent)
	photo := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == sent.ID })

	// The account answers: a reply quoting the photo and mentioning Kim, a
	// reaction, an edit and a revoke; and marks the photo read.
	send := func(msg *waE2E.Message) types.MessageID {
		t.Helper()
		resp, err := tc.SendMessage(context.Background(), kim.JID(), msg)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ID
	}
	reply := send(&waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("nice @4915600000002"),
		ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String(photo.Info.ID), Participant: proto.String(kim.JID().String()),
			QuotedMessage: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("look")}},
			MentionedJID:  []string{kim.JID().String()}}}})
	send(tc.BuildReaction(kim.JID(), kim.JID(), photo.Info.ID, "👍"))
	send(tc.BuildEdit(kim.JID(), reply, &waE2E.Message{Conversation: proto.String("very nice")}))
	send(tc.BuildRevoke(kim.JID(), types.EmptyJID, reply))
	if err := tc.MarkRead(context.Background(), []types.MessageID{photo.Info.ID}, photo.Info.Timestamp, kim.JID(), kim.JID()); err != nil {
		t.Fatal(err)
	}
	if _, err := kim.WaitTick(ctx, photo.Info.ID, types.ReceiptTypeRead); err != nil {
		t.Fatal(err)
	}

	var got []struct {
		Quoted *struct {
			ID, Kind, Text string
		} `json:"quoted"`
		Mentions []string `json:"mentions"`
		Reaction *struct{ Target, Emoji string }
		Edit     *struct{ Target, Text string }
		Revoke   *struct{ Target string }
	}
	api(t, base, "GET", "/v1/users/4915600000002/received", nil, 200, &got)
	if len(got) != 4 {
		t.Fatalf("Kim received %d messages, want 4: %+v", len(got), got)
	}
	if q := got[0].Quoted; q == nil || q.ID != photo.Info.ID || q.Kind != "image" || q.Text != "look" ||
		len(got[0].Mentions) != 1 || got[0].Mentions[0] != kim.JID().String() {
		t.Errorf("the reply: %+v", got[0])
	}
	if r := got[1].Reaction; r == nil || r.Target != photo.Info.ID || r.Emoji != "👍" {
		t.Errorf("the reaction: %+v", got[1])
	}
	if e := got[2].Edit; e == nil || e.Target != reply || e.Text != "very nice" {
		t.Errorf("the edit: %+v", got[2])
	}
	if r := got[3].Revoke; r == nil || r.Target != reply {
		t.Errorf("the revoke: %+v", got[3])
	}
	var ticks []struct{ ID, Type string }
	api(t, base, "GET", "/v1/users/4915600000002/ticks", nil, 200, &ticks)
	if len(ticks) == 0 || ticks[len(ticks)-1].ID != photo.Info.ID || ticks[len(ticks)-1].Type != "read" {
		t.Errorf("ticks %+v", ticks)
	}

	// Last, a new contact who hides their number: the account sees the LID only.
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915600000003", "name": "Lee"}, 201, nil)
	api(t, base, "POST", "/v1/users/4915600000003/addressing", map[string]string{"addressing": "sometimes"}, 400, nil)
	var hidden struct {
		LID string `json:"lid"`
	}
	api(t, base, "POST", "/v1/users/4915600000003/addressing", map[string]string{"addressing": "lid_hidden"}, 200, &hidden)
	api(t, base, "POST", "/v1/users/4915600000003/messages", map[string]string{"to": "4915600000001", "text": "guess who"}, 200, &sent)
	m = wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == sent.ID })
	if m.Info.Sender.Server != types.HiddenUserServer || m.Info.Sender.ToNonAD().String() != hidden.LID {
		t.Errorf("the hidden sender arrived as %s, want %s", m.Info.Sender, hidden.LID)
	}
}
