package wasim_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// A contact's phone shows a poll whatsmeow sent and votes on it through
// the control API; whatsmeow decrypts the vote with the poll's secret to
// the hashes of the options chosen. A vote on a message that is no poll,
// or on one the phone never received, is refused.
// phoneAndClient is a simulator with its control API, a whatsmeow client
// linked to 4915700000001 and the contact Kim (4915700000002).
func phoneAndClient(t *testing.T) (base string, ctx context.Context, tc *wasimtest.Client, kim *wasim.User) {
	t.Helper()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	base, ctx = srv.URL, wasimtest.Context(t)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915700000001", "name": "Me"}, 201, nil)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915700000002", "name": "Kim"}, 201, nil)
	tc = wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) { wasimclient.Configure(cli, sim.Addr()) })
	item, _ := wasimtest.ConnectForQR(t, ctx, tc)
	api(t, base, "POST", "/v1/users/4915700000001/scan", map[string]string{"qr": item.Code}, 200, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	kim, _ = sim.LookupUser("4915700000002")
	return base, ctx, tc, kim
}

func TestControlAPIPollVote(t *testing.T) {
	t.Parallel()
	base, ctx, tc, kim := phoneAndClient(t)
	poll, err := tc.SendMessage(context.Background(), kim.JID(), tc.BuildPollCreation("Lunch?", []string{"Pizza", "Sushi", "Soup"}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kim.WaitMessage(ctx, poll.ID); err != nil {
		t.Fatal(err)
	}
	var shown []struct {
		ID   string `json:"id"`
		Poll *struct {
			Question        string   `json:"question"`
			Options         []string `json:"options"`
			SelectableCount int      `json:"selectable_count"`
		} `json:"poll"`
	}
	api(t, base, "GET", "/v1/users/4915700000002/received", nil, 200, &shown)
	if len(shown) != 1 || shown[0].Poll == nil || shown[0].Poll.Question != "Lunch?" || len(shown[0].Poll.Options) != 3 ||
		shown[0].Poll.SelectableCount != 2 {
		t.Fatalf("Kim's phone shows %+v", shown)
	}

	var voted struct {
		ID string `json:"id"`
	}
	api(t, base, "POST", "/v1/users/4915700000002/votes", map[string]any{"poll_id": poll.ID, "options": []string{"Sushi", "Soup"}}, 200, &voted)
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == voted.ID })
	vote, err := tc.DecryptPollVote(context.Background(), m)
	if err != nil {
		t.Fatalf("the vote does not decrypt: %v", err)
	}
	want := whatsmeow.HashPollOptions([]string{"Sushi", "Soup"})
	if got := vote.GetSelectedOptions(); len(got) != 2 || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
		t.Errorf("the vote chose %x, want %x", got, want)
	}

	text, err := tc.SendMessage(context.Background(), kim.JID(), &waE2E.Message{Conversation: proto.String("no poll")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kim.WaitMessage(ctx, text.ID); err != nil {
		t.Fatal(err)
	}
	api(t, base, "POST", "/v1/users/4915700000002/votes", map[string]any{"poll_id": text.ID, "options": []string{"a"}}, 400, nil)
	api(t, base, "POST", "/v1/users/4915700000002/votes", map[string]any{"poll_id": "3EB0NOTHERE", "options": []string{"a"}}, 404, nil)
}

// As WhatsApp answers a linked device's buttons: the legacy ButtonsMessage
// (whatsmeow's <biz><buttons/>) is refused 405, an <interactive> without
// its native_flow 479; a native-flow message without the <biz> node is
// delivered and shows no buttons, with it the buttons render, and a tap
// through the control API reaches the client as an InteractiveResponseMessage.
func TestControlAPINativeFlowButtons(t *testing.T) {
	t.Parallel()
	base, ctx, tc, kim := phoneAndClient(t)
	send := func(msg *waE2E.Message, biz ...waBinary.Node) (whatsmeow.SendResponse, error) {
		return tc.SendMessage(context.Background(), kim.JID(), msg, whatsmeow.SendRequestExtra{AdditionalNodes: &biz})
	}
	legacy := &waE2E.Message{ButtonsMessage: &waE2E.ButtonsMessage{ContentText: proto.String("old")}}
	if _, err := send(legacy); err == nil || !strings.Contains(err.Error(), "405") {
		t.Errorf("legacy buttons: %v, want the server's 405", err)
	}
	flow := &waE2E.Message{InteractiveMessage: &waE2E.InteractiveMessage{
		Body: &waE2E.InteractiveMessage_Body{Text: proto.String("Go?")},
		InteractiveMessage: &waE2E.InteractiveMessage_NativeFlowMessage_{NativeFlowMessage: &waE2E.InteractiveMessage_NativeFlowMessage{
			Buttons: []*waE2E.InteractiveMessage_NativeFlowMessage_NativeFlowButton{
				{Name: proto.String("quick_reply"), ButtonParamsJSON: proto.String(`{"display_text":"Yes","id":"go:yes"}`)},
			},
		}},
	}}
	bare := waBinary.Node{Tag: "biz", Content: []waBinary.Node{{Tag: "interactive", Attrs: waBinary.Attrs{"type": "native_flow", "v": "1"}}}}
	if _, err := send(flow, bare); err == nil || !strings.Contains(err.Error(), "479") {
		t.Errorf("interactive without native_flow: %v, want the server's 479", err)
	}
	unseen, err := send(flow)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := kim.WaitMessage(ctx, unseen.ID); err != nil || m.Buttons() != nil {
		t.Errorf("without <biz> the phone shows %v (%v), want nothing", m.Buttons(), err)
	}
	biz := waBinary.Node{Tag: "biz", Content: []waBinary.Node{
		{Tag: "interactive", Attrs: waBinary.Attrs{"type": "native_flow", "v": "1"}, Content: []waBinary.Node{
			{Tag: "native_flow", Attrs: waBinary.Attrs{"v": "9", "name": "mixed"}},
		}},
	}}
	shown, err := send(flow, biz)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kim.WaitMessage(ctx, shown.ID); err != nil {
		t.Fatal(err)
	}
	var received []struct {
		ID      string `json:"id"`
		Buttons []struct{ ID, Title string }
	}
	api(t, base, "GET", "/v1/users/4915700000002/received", nil, 200, &received)
	if len(received) != 2 || received[0].Buttons != nil || len(received[1].Buttons) != 1 || received[1].Buttons[0].ID != "go:yes" {
		t.Fatalf("Kim's phone shows %+v", received)
	}
	api(t, base, "POST", "/v1/users/4915700000002/taps", map[string]string{"message_id": unseen.ID, "button_id": "go:yes"}, 400, nil)
	var tap struct {
		ID string `json:"id"`
	}
	api(t, base, "POST", "/v1/users/4915700000002/taps", map[string]string{"message_id": shown.ID, "button_id": "go:yes"}, 200, &tap)
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == tap.ID })
	r := m.Message.GetInteractiveResponseMessage()
	if r.GetBody().GetText() != "Yes" || r.GetNativeFlowResponseMessage().GetParamsJSON() != `{"id":"go:yes"}` ||
		r.GetContextInfo().GetStanzaID() != shown.ID {
		t.Errorf("the tap arrived as %v", m.Message)
	}
}
