package webhook

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// Group changes as receivers see them: a member change, an info change,
// and a new group as both.
func TestGroupPayloads(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	group := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	by := bridge.PhoneRecipient("4915100000001")
	subject, none := "Ops", ""
	head := `"group":"120363025246125486@g.us",`
	for _, c := range []struct {
		name   string
		change bridge.GroupChange
		bodies []string
	}{
		{"added", bridge.GroupChange{Group: group, By: by, At: at, MemberAction: bridge.MemberAdd, Reason: "invite",
			Members: []bridge.GroupMember{{Phone: "491512345678", LID: "99887766@lid"}, {LID: "11@lid"}}},
			[]string{`{"event":"group.participants",` + head + `"action":"add","participants":[{"phone":"491512345678","lid":"99887766@lid"},{"phone":null,"lid":"11@lid"}],"by":"4915100000001","reason":"invite","timestamp":"2026-11-21T10:00:00.000Z"}`}},
		{"description removed by the server", bridge.GroupChange{Group: group, At: at, Description: &none, InviteReset: true},
			[]string{`{"event":"group.update",` + head + `"by":null,"timestamp":"2026-11-21T10:00:00.000Z","description":"","invite_link_reset":true}`}},
		{"created", bridge.GroupChange{Group: group, By: by, At: at, Created: true, Subject: &subject, MemberAction: bridge.MemberAdd,
			Members: []bridge.GroupMember{{Phone: "4915100000001", Admin: true}}},
			[]string{
				`{"event":"group.participants",` + head + `"action":"add","participants":[{"phone":"4915100000001","lid":null}],"by":"4915100000001","reason":"create","timestamp":"2026-11-21T10:00:00.000Z"}`,
				`{"event":"group.update",` + head + `"by":"4915100000001","timestamp":"2026-11-21T10:00:00.000Z","subject":"Ops"}`,
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs := GroupEvents(c.change)
			if len(evs) != len(c.bodies) {
				t.Fatalf("%d events, want %d", len(evs), len(c.bodies))
			}
			for i, ev := range evs {
				body, err := json.Marshal(ev.Payload)
				if err != nil {
					t.Fatal(err)
				}
				apitest.ValidateWebhook(t, body)
				if ev.Key != "group:120363025246125486@g.us" || string(body) != c.bodies[i] {
					t.Errorf("%s %s\n got %s\nwant %s", ev.Type, ev.Key, body, c.bodies[i])
				}
			}
		})
	}
}
