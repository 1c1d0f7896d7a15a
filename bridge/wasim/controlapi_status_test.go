package wasim_test

import (
	"bytes"
	"context"
	"encoding/base64"
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

// A contact posts a status through the control API: the linked whatsmeow
// client decrypts it from status@broadcast with the contact as sender, a
// text and an image it downloads. A status for no existing user, or with
// nothing in it, is refused.
func TestControlAPIStatusReachesTheClient(t *testing.T) {
	t.Parallel()
	base, ctx, tc, kim := phoneAndClient(t)
	var posted struct {
		ID string `json:"id"`
	}
	api(t, base, "POST", "/v1/users/4915700000002/status", map[string]any{"to": []string{"4915700000001"}, "text": "Back on Monday"}, 200, &posted)
	// whatsmeow reports the sender key that precedes the status as a message
	// of its own, with the same id.
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == posted.ID && m.Message.GetConversation() != "" })
	if m.Info.Chat != types.StatusBroadcastJID || m.Info.Sender.User != kim.JID().User || m.Message.GetConversation() != "Back on Monday" {
		t.Errorf("the client got %+v: %v", m.Info, m.Message)
	}

	photo := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{5}, 200)...)
	api(t, base, "POST", "/v1/users/4915700000002/status", map[string]any{"to": []string{"4915700000001"}, "text": "view",
		"media": map[string]any{"kind": "image", "mimetype": "image/png", "data_base64": base64.StdEncoding.EncodeToString(photo)}}, 200, &posted)
	m = wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == posted.ID && m.Message.GetImageMessage() != nil })
	img := m.Message.GetImageMessage()
	data, err := tc.Download(ctx, img)
	if m.Info.Chat != types.StatusBroadcastJID || err != nil || !bytes.Equal(data, photo) || img.GetCaption() != "view" {
		t.Errorf("image status: %v %v", img, err)
	}

	api(t, base, "POST", "/v1/users/4915700000002/status", map[string]any{"to": []string{"4915799999999"}, "text": "x"}, 400, nil)
	api(t, base, "POST", "/v1/users/4915700000002/status", map[string]any{"to": []string{}, "text": "x"}, 400, nil)
	api(t, base, "POST", "/v1/users/4915700000002/status", map[string]any{"to": []string{"4915700000001"}}, 400, nil)
}

// A client's status reaches the phones whatsmeow names: those of
// StatusRecipients when given, else those of the status privacy setting,
// which the server answers (contacts by default, the whitelist once set).
func TestClientStatusReachesItsAudience(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	ctx := wasimtest.Context(t)
	me, kim := sim.Phone("4915700000001"), sim.Contact("4915700000002", "Kim")
	tc := wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) { wasimclient.Configure(cli, sim.Addr()) })
	item, _ := wasimtest.ConnectForQR(t, ctx, tc)
	if _, err := me.ScanQR(ctx, item.Code); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	privacy, err := tc.GetStatusPrivacy(context.Background())
	if err != nil || len(privacy) != 1 || privacy[0].Type != types.StatusPrivacyTypeContacts || !privacy[0].IsDefault {
		t.Fatalf("default status privacy %+v %v", privacy, err)
	}
	me.SetStatusAudience(kim)
	privacy, err = tc.GetStatusPrivacy(context.Background())
	if err != nil || privacy[0].Type != types.StatusPrivacyTypeWhitelist || len(privacy[0].List) != 1 || privacy[0].List[0] != kim.JID() {
		t.Fatalf("whitelist %+v %v", privacy, err)
	}

	for _, extra := range []whatsmeow.SendRequestExtra{{StatusRecipients: []types.JID{kim.JID()}}, {}} {
		resp, err := tc.SendMessage(context.Background(), types.StatusBroadcastJID, &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
			Text: proto.String("Open on Sunday"), BackgroundArgb: proto.Uint32(0xFF1E88E5)}}, extra)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kim.WaitMessage(ctx, resp.ID)
		if err != nil || got.Err != nil || got.Chat != types.StatusBroadcastJID || got.EncType != "skmsg" || got.Text() != "Open on Sunday" ||
			got.Content().GetExtendedTextMessage().GetBackgroundArgb() != 0xFF1E88E5 {
			t.Errorf("Kim's phone (recipients %v): %+v %v", extra.StatusRecipients, got, err)
		}
	}
}
