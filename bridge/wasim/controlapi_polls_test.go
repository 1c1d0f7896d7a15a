package wasim_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"go.mau.fi/whatsmeow"
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
func TestControlAPIPollVote(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	base, ctx := srv.URL, wasimtest.Context(t)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915700000001", "name": "Me"}, 201, nil)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915700000002", "name": "Kim"}, 201, nil)
	tc := wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) { wasimclient.Configure(cli, sim.Addr()) })
	item, _ := wasimtest.ConnectForQR(t, ctx, tc)
	api(t, base, "POST", "/v1/users/4915700000001/scan", map[string]string{"qr": item.Code}, 200, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	kim, _ := sim.LookupUser("4915700000002")

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
