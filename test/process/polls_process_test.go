package process

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

type pollTally struct {
	Type string `json:"type"`
	Poll *struct {
		Question        string `json:"question"`
		SelectableCount int    `json:"selectable_count"`
		Options         []struct {
			Name   string   `json:"name"`
			Count  int      `json:"count"`
			Voters []string `json:"voters"`
		} `json:"options"`
	} `json:"poll"`
}

// tally is the poll's options as "name:count:voters", in its order.
func (p pollTally) tally() []string {
	var out []string
	for _, o := range p.Poll.Options {
		out = append(out, fmt.Sprint(o.Name, ":", o.Count, ":", o.Voters))
	}
	return out
}

// A poll sent through the API reaches the contact with its options and
// selectable count; the contacts' votes, encrypted with the poll's secret
// as phones do, arrive as message.poll_vote events naming the options,
// also after a restart (the secret is in the session's store); a changed
// vote replaces the voter's earlier one in the tally.
func TestPollThroughTheAPI(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	voter := sim.Contact(alice, "Alice")
	code, raw := apiJSON(t, p, "POST", "/api/messages", `{"to":"`+alice+`","type":"poll",
		"poll":{"question":"Which colour?","options":["Red","Green","Blue"],"selectable_count":2}}`, nil)
	if code != http.StatusOK {
		t.Fatalf("send a poll: %d %s", code, raw)
	}
	sent := decode[sendResponse](t, raw).Messages[0]
	got := receive(t, voter, sent.WhatsAppID).Poll()
	var names []string
	for _, o := range got.GetOptions() {
		names = append(names, o.GetOptionName())
	}
	if got.GetName() != "Which colour?" || !slices.Equal(names, []string{"Red", "Green", "Blue"}) || got.GetSelectableOptionsCount() != 2 {
		t.Fatalf("the contact's phone shows the poll %q %v (choose %d)", got.GetName(), names, got.GetSelectableOptionsCount())
	}

	vote := func(u *wasim.User, options ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		id, err := u.Vote(ctx, receive(t, u, sent.WhatsAppID), options...)
		if err != nil {
			t.Fatal(err)
		}
		ev := hooks.wait("message.poll_vote "+id, func(e hookEvent) bool { return e.str("whatsapp_id") == id })
		chosen, _ := ev.Payload["options"].([]any)
		if ev.str("event") != "message.poll_vote" || ev.str("target_id") != sent.WhatsAppID || ev.str("from") != u.Number() ||
			fmt.Sprint(chosen) != fmt.Sprint(options) {
			t.Errorf("vote of %s for %v: %+v", u.Number(), options, ev.Payload)
		}
	}
	tally := func() []string {
		t.Helper()
		var m pollTally
		if code, raw := apiJSON(t, p, "GET", "/api/messages/"+sent.ID, "", &m); code != http.StatusOK || m.Poll == nil {
			t.Fatalf("get the poll: %d %s", code, raw)
		}
		return m.tally()
	}
	vote(voter, "Red", "Blue")
	if got, want := tally(), []string{"Red:1:[" + alice + "]", "Green:0:[]", "Blue:1:[" + alice + "]"}; !slices.Equal(got, want) {
		t.Errorf("tally %v, want %v", got, want)
	}

	// The poll's secret outlives the process: a vote after a restart decrypts.
	p.kill()
	p = startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), hooks.env()...))
	waitAdminState(t, p, "connected", connected)
	vote(voter, "Green") // a changed vote replaces the first
	if got, want := tally(), []string{"Red:0:[]", "Green:1:[" + alice + "]", "Blue:0:[]"}; !slices.Equal(got, want) {
		t.Errorf("tally after the changed vote %v, want %v", got, want)
	}
}
