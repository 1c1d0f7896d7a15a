package sendqueue

import (
	"reflect"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

func statusDraft(to string, st *bridge.StatusDraft) Draft {
	return Draft{To: to, Status: st, Items: []ItemDraft{{Type: "text", Text: "Open on Sunday"}}}
}

// A message to status@broadcast is a status post: it names its audience,
// quotes and mentions nobody, and a status object goes nowhere else.
func TestDraftOfAStatus(t *testing.T) {
	audience := &bridge.StatusDraft{Recipients: []string{"+49 151 1234 5678"}, Font: new("system_bold")}
	req, err := statusDraft(" status@broadcast ", audience).Validate()
	if err != nil || req.Recipient != bridge.StatusBroadcast || req.Items[0].Status == nil ||
		!reflect.DeepEqual(req.Items[0].Status.Recipients, []bridge.Recipient{alice}) || *req.Items[0].Status.Font != 6 {
		t.Fatalf("a status: %+v %v", req, err)
	}
	if err := req.validate(); err != nil {
		t.Errorf("the queue refuses the valid status: %v", err)
	}
	_, err = statusDraft("status@broadcast", nil).Validate()
	wantError(t, err, bridge.KindInvalid, bridge.CodeMissingStatusRecipients)
	_, err = statusDraft("4915112345678", audience).Validate()
	wantError(t, err, bridge.KindInvalid, bridge.CodeUnexpectedStatus)
	reply := statusDraft("status@broadcast", audience)
	reply.ReplyTo = new("3EB0AAAA")
	_, err = reply.Validate()
	wantError(t, err, bridge.KindInvalid, bridge.CodeUnexpectedStatusContext)
	mention := statusDraft("status@broadcast", audience)
	mention.Mentions = []string{"4915112345678"}
	_, err = mention.Validate()
	wantError(t, err, bridge.KindInvalid, bridge.CodeUnexpectedStatusContext)
	doc := statusDraft("status@broadcast", &bridge.StatusDraft{Recipients: []string{"4915112345678"}})
	doc.Items[0] = ItemDraft{Type: "location", Location: &LocationDraft{Latitude: new(1.0), Longitude: new(2.0)}}
	_, err = doc.Validate()
	wantError(t, err, bridge.KindInvalid, bridge.CodeInvalidStatusType)

	// The queue's own check: a status names its audience, and only a status.
	wantError(t, Request{Recipient: bridge.StatusBroadcast, Items: []Item{{Type: bridge.TypeText, Text: "x"}}}.validate(),
		bridge.KindInvalid, bridge.CodeMissingStatusRecipients)
	wantError(t, Request{Recipient: alice, Items: []Item{{Type: bridge.TypeText, Text: "x", Status: req.Items[0].Status}}}.validate(),
		bridge.KindInvalid, bridge.CodeMissingStatusRecipients)
	wantError(t, Request{Recipient: bridge.StatusBroadcast, Items: []Item{{Type: bridge.TypeRevoke, Action: &Action{TargetID: "3EB0AAAA"}}}}.validate(),
		bridge.KindInvalid, bridge.CodeInvalidAction)
}

// A status post's audience and style are stored with it and sent as they
// were accepted, also after a restart; the idempotency hash covers them.
func TestStatusSurvivesTheStore(t *testing.T) {
	f := newFixture(t, 50*time.Millisecond)
	f.sender.setReady(false)
	font := 2
	post := &bridge.StatusPost{Recipients: []bridge.Recipient{alice, bridge.PhoneRecipient("4915100000002")}, BackgroundARGB: 0x801E88E5, Font: &font}
	req := Request{Recipient: bridge.StatusBroadcast, Items: []Item{{Type: bridge.TypeText, Text: "Open on Sunday", Status: post}}}
	res := f.submit(req)
	f.close()
	f.open(nil)
	f.sender.setReady(true)
	f.run()
	m := f.waitStatus(res.Messages[0].ID, bridge.StatusSent)
	if m.Recipient != bridge.StatusBroadcast {
		t.Errorf("logged to %+v", m.Recipient)
	}
	calls := f.sender.calls()
	if out := calls[len(calls)-1].out; out.Recipient != bridge.StatusBroadcast || !reflect.DeepEqual(out.Status, post) {
		t.Errorf("sent %+v with %+v, accepted %+v", out, out.Status, post)
	}

	first, err := requestHash(req)
	if err != nil {
		t.Fatal(err)
	}
	other := *post
	other.Recipients = post.Recipients[:1]
	req.Items = []Item{{Type: bridge.TypeText, Text: "Open on Sunday", Status: &other}}
	if h, err := requestHash(req); err != nil || h == first {
		t.Errorf("another audience hashes alike (%v)", err)
	}
}
