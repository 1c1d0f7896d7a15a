package sendqueue

import (
	"context"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// FuzzParseMessageID: an id is accepted only as it is, 1-128 letters,
// digits and dashes, never anything a path or query would read otherwise.
func FuzzParseMessageID(f *testing.F) {
	for _, s := range []string{"3EB0AAAA", "01a208ed-5ffb-75ed-9f73-3e0f27ad036b", "", "a.b", "a/b", strings.Repeat("a", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseMessageID(s)
		if err != nil {
			if bridge.ErrorOf(err).Code != bridge.CodeInvalidMessageID {
				t.Fatalf("error %v", err)
			}
			return
		}
		if id != s || len(s) == 0 || len(s) > maxMessageID || strings.ContainsAny(s, "./?#% @") {
			t.Fatalf("accepted %q", s)
		}
	})
}

// A target named by id alone: the account's own message from the log (an
// action or a failed one refused), a received one from the incoming
// history for a reaction only, anything else not found.
func TestTargetsFind(t *testing.T) {
	f := newFixture(t)
	sent := f.submit(textRequest("hello")).Messages[0]
	ctx := context.Background()
	history := receivedOnly{id: "3A0RECEIVED", chat: alice, sender: alice}
	targets := Targets{Log: f.q, History: history}

	own, err := targets.Find(ctx, sent.ID, bridge.TypeEdit)
	if err != nil || own.Own == nil || own.ID != sent.WhatsAppID || own.Chat != alice {
		t.Fatalf("own message: %+v %v", own, err)
	}
	got, err := targets.Find(ctx, "3A0RECEIVED", bridge.TypeReaction)
	if err != nil || got.Own != nil || got.ID != "3A0RECEIVED" || got.Sender != alice {
		t.Fatalf("received message: %+v %v", got, err)
	}
	if req := got.Action(bridge.TypeReaction, "", "k", func(a *Action) { a.Emoji = "👍" }); req.Items[0].Action.TargetSender != alice ||
		req.Items[0].Action.Emoji != "👍" || req.IdempotencyKey != "k" || req.Recipient != alice {
		t.Errorf("reaction request %+v", req)
	}
	for _, c := range []struct {
		id   string
		typ  bridge.MessageType
		code string
	}{
		{"3A0RECEIVED", bridge.TypeEdit, bridge.CodeMessageNotFound},
		{"3A0UNKNOWN", bridge.TypeReaction, bridge.CodeMessageNotFound},
		{"a/b", bridge.TypeReaction, bridge.CodeInvalidMessageID},
	} {
		if _, err := targets.Find(ctx, c.id, c.typ); bridge.ErrorOf(err).Code != c.code {
			t.Errorf("%s %s: %v, want %s", c.typ, c.id, err, c.code)
		}
	}
}

type receivedOnly struct {
	id           string
	chat, sender bridge.Recipient
}

func (h receivedOnly) Received(_ context.Context, id string) (chat, sender bridge.Recipient, found bool, err error) {
	return h.chat, h.sender, id == h.id, nil
}
