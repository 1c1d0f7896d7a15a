package wasim_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// api calls the control API and decodes the JSON answer into out (if not nil).
func api(t testing.TB, base, method, path string, body any, wantStatus int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: status %d (%s), want %d", method, path, resp.StatusCode, raw, wantStatus)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

// TestControlAPI drives a client the way an end-to-end test of the bridge
// does: over real HTTP, with the client wired by wasimclient from the
// address and root key the API reports.
func TestControlAPI(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	base := srv.URL
	ctx := wasimtest.Context(t)

	var info struct {
		Addr          string `json:"addr"`
		RootPublicKey string `json:"root_public_key"`
	}
	api(t, base, "GET", "/v1/info", nil, 200, &info)
	if info.Addr != sim.Addr() || info.RootPublicKey != sim.RootPublicKeyHex() {
		t.Fatalf("info %+v", info)
	}
	// The test binary's globals already hold this key: installing it again is a no-op.
	if key, err := wasimclient.ParseRootKey(info.RootPublicKey); err != nil || key != sim.RootPublicKey() {
		t.Fatalf("root key %x, %v", key, err)
	}

	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915600000001", "name": "Me"}, 201, nil)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915600000002", "name": "Kim", "receipt_mode": "none"}, 201, nil)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "12", "name": "bad"}, 400, nil)
	api(t, base, "POST", "/v1/users", map[string]string{"number": "4915600000003", "receipt_mode": "sometimes"}, 400, nil)
	api(t, base, "GET", "/v1/users/4915699999999", nil, 404, nil)

	// Link by QR, the client wired the way the bridge's wasim build does it.
	tc := wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) { wasimclient.Configure(cli, info.Addr) })
	item, _ := wasimtest.ConnectForQR(t, ctx, tc)
	var linked struct {
		Device string `json:"device"`
	}
	api(t, base, "POST", "/v1/users/4915600000002/scan", map[string]string{"qr": "garbage"}, 400, nil)
	api(t, base, "POST", "/v1/users/4915600000001/scan", map[string]string{"qr": item.Code}, 200, &linked)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	if linked.Device != tc.Store.ID.String() {
		t.Fatalf("API linked %s, client is %s", linked.Device, tc.Store.ID)
	}
	var me struct {
		Devices   []string `json:"devices"`
		Connected []string `json:"connected"`
	}
	api(t, base, "GET", "/v1/users/4915600000001", nil, 200, &me)
	if len(me.Devices) != 1 || me.Devices[0] != linked.Device {
		t.Fatalf("user %+v", me)
	}

	// Client -> contact, listed by the API with its text; a read receipt on command.
	kim, _ := sim.LookupUser("4915600000002")
	id := sendText(t, tc, kim.JID(), "hello Kim")
	waitMessage(t, kim, id)
	var received []struct {
		Index int    `json:"index"`
		ID    string `json:"id"`
		Text  string `json:"text"`
		Chat  string `json:"chat"`
	}
	api(t, base, "GET", "/v1/users/4915600000002/received?since=0", nil, 200, &received)
	if len(received) != 1 || received[0].ID != id || received[0].Text != "hello Kim" {
		t.Fatalf("received %+v", received)
	}
	api(t, base, "GET", "/v1/users/4915600000002/received?since=1", nil, 200, &received)
	if len(received) != 0 {
		t.Fatalf("received since 1: %+v", received)
	}
	api(t, base, "POST", "/v1/users/4915600000002/receipts", map[string]string{"id": id, "type": "read"}, 200, nil)
	r := wasimtest.WaitEvent(t, tc, func(r *events.Receipt) bool { return r.MessageIDs[0] == id })
	if r.Type != types.ReceiptTypeRead {
		t.Fatalf("receipt %+v", r)
	}

	// Contact -> client: text and a document.
	var sent struct {
		ID string `json:"id"`
	}
	api(t, base, "POST", "/v1/users/4915600000002/messages", map[string]string{"to": "4915600000001", "text": "hi there"}, 200, &sent)
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == sent.ID })
	if m.Message.GetConversation() != "hi there" {
		t.Fatalf("message %v", m.Message)
	}
	doc := []byte("%PDF-1.4 tiny")
	api(t, base, "POST", "/v1/users/4915600000002/messages", map[string]any{"to": "4915600000001@s.whatsapp.net", "media": map[string]string{
		"kind": "document", "mimetype": "application/pdf", "file_name": "a.pdf", "caption": "see", "data_base64": base64.StdEncoding.EncodeToString(doc),
	}}, 200, &sent)
	m = wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == sent.ID })
	if got, err := tc.Download(ctx, m.Message.GetDocumentMessage()); err != nil || !bytes.Equal(got, doc) || m.Message.GetDocumentMessage().GetFileName() != "a.pdf" {
		t.Fatalf("document %v: %q, %v", m.Message.GetDocumentMessage(), got, err)
	}
	api(t, base, "POST", "/v1/users/4915600000002/messages", map[string]string{"to": "4915600000001"}, 400, nil)

	// Groups.
	var group struct {
		JID string `json:"jid"`
	}
	api(t, base, "POST", "/v1/groups", map[string]any{"subject": "Ops", "owner": "4915600000002", "members": []string{"4915600000001"}}, 201, &group)
	groups, err := tc.GetJoinedGroups(ctx)
	if err != nil || len(groups) != 1 || groups[0].JID.String() != group.JID {
		t.Fatalf("joined groups %v, %v", groups, err)
	}

	// Faults.
	api(t, base, "POST", "/v1/users/4915600000001/faults", map[string]string{"fault": "nonsense"}, 400, nil)
	var fault struct {
		Affected int `json:"affected"`
	}
	api(t, base, "POST", "/v1/users/4915600000001/faults", map[string]string{"fault": "drop"}, 200, &fault)
	if fault.Affected != 1 {
		t.Fatalf("drop affected %d", fault.Affected)
	}
	wasimtest.WaitEvent[*events.Disconnected](t, tc, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	api(t, base, "POST", "/v1/users/4915600000001/faults", map[string]any{"fault": "send_error", "count": 1}, 200, nil)
	if _, err := tc.SendMessage(ctx, kim.JID(), textMessage("fails")); err == nil {
		t.Fatal("send after send_error fault succeeded")
	}
}

// TestControlAPIPairingCode links a client by pairing code through the API.
func TestControlAPIPairingCode(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	ctx := wasimtest.Context(t)
	api(t, srv.URL, "POST", "/v1/users", map[string]string{"number": "4915600000011"}, 201, nil)

	tc := wasimtest.NewClient(t, sim, wasimtest.NewContainer(t).NewDevice())
	wasimtest.ConnectForQR(t, ctx, tc) // the socket is ready once the first QR arrives
	api(t, srv.URL, "POST", "/v1/users/4915600000011/code", map[string]string{"code": "ABCD-EFGH"}, 404, nil)
	code, err := tc.PairPhone(ctx, "4915600000011", true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	if err != nil {
		t.Fatal(err)
	}
	api(t, srv.URL, "POST", "/v1/users/4915600000011/code", map[string]string{"code": code}, 200, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
}
