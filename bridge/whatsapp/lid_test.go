package whatsapp

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// waitIncoming waits until the fake port stored the message id.
func waitIncoming(t *testing.T, r *running, id string) bridge.Incoming {
	t.Helper()
	waitFor(t, "message "+id, func() bool { return len(r.events.received()[id]) > 0 })
	return r.events.received()[id][0]
}

// A contact writing by its LID is answered through the message's From,
// whether its phone number is known (From is the number) or hidden (From is
// the LID), and its phone decrypts the answer. The learnt LID/phone pair is
// kept across a restart.
func TestLIDSendersAreAnswered(t *testing.T) {
	for _, c := range []struct {
		name      string
		mode      wasim.Addressing
		wantPhone bool
	}{
		{"known number", wasim.AddressLIDWithPhone, true},
		{"hidden number", wasim.AddressLIDHidden, false},
		{"phone addressing", wasim.AddressPhone, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim, r, alice := linked(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			alice.SetAddressing(c.mode)
			id, err := alice.SendText(ctx, sim.Phone(account).JID(), "who am I")
			if err != nil {
				t.Fatal(err)
			}
			in := waitIncoming(t, r, id)
			phone := bridge.PhoneRecipient(alice.Number())
			lid := bridge.Recipient{Kind: bridge.RecipientLID, ID: alice.LID().User}
			want := lid
			if c.wantPhone {
				want = phone
				if in.FromPhone != phone {
					t.Errorf("from_phone %+v, want %+v", in.FromPhone, phone)
				}
			} else if !in.FromPhone.IsZero() {
				t.Errorf("a hidden number is known: %+v", in.FromPhone)
			}
			if in.From != want || (c.mode != wasim.AddressPhone && in.FromLID != lid) {
				t.Fatalf("from %+v, from_lid %+v; want %+v, %+v", in.From, in.FromLID, want, lid)
			}
			// The backend answers whatever From names.
			if err := r.Send(ctx, bridge.Outgoing{ID: r.NewMessageID(), Recipient: in.From, Type: bridge.TypeText, Text: "you are " + in.From.String()}); err != nil {
				t.Fatalf("reply to %s: %v", in.From, err)
			}
			got, err := alice.Next(ctx)
			if err != nil || got.Err != nil || got.Text() != "you are "+in.From.String() {
				t.Fatalf("the contact read %+v (%v)", got, err)
			}
		})
	}
}

// A LID/phone pair learnt from one message names the sender of a later
// message that hides the number, also after a restart.
func TestLearntLIDPairsSurviveARestart(t *testing.T) {
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	linkByQR(t, sim, r)
	alice := sim.Contact("4915100000002", "Alice")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alice.SetAddressing(wasim.AddressLIDWithPhone)
	first, err := alice.SendText(ctx, sim.Phone(account).JID(), "with number")
	if err != nil {
		t.Fatal(err)
	}
	waitIncoming(t, r, first)
	if _, err := alice.WaitTick(ctx, first, ""); err != nil {
		t.Fatal(err)
	}
	r.stop()

	r2 := start(t, sim, f)
	waitState(t, r2.Session, "reconnected", func(s bridge.SessionStatus) bool { return s.Connected() })
	alice.SetAddressing(wasim.AddressLIDHidden)
	second, err := alice.SendText(ctx, sim.Phone(account).JID(), "hidden now")
	if err != nil {
		t.Fatal(err)
	}
	in := waitIncoming(t, r2, second)
	if in.From != bridge.PhoneRecipient(alice.Number()) || in.FromLID.ID != alice.LID().User {
		t.Fatalf("after a restart the pair is lost: from %+v, from_lid %+v", in.From, in.FromLID)
	}
}
