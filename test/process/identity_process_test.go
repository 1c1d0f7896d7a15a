package process

import (
	"context"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// A contact first writes hiding its number, then shows it: the bridge
// announces once that the LID and the number are one person
// (contact.identity), before the message that taught it; a third message
// announces nothing more.
func TestContactIdentityIsAnnouncedOnce(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	contact := sim.Contact(alice, "Alice")
	to := types.NewJID(testAccount, types.DefaultUserServer)
	send := func(mode wasim.Addressing, text string) string {
		contact.SetAddressing(mode)
		id, err := contact.SendText(context.Background(), to, text)
		if err != nil {
			t.Fatal(err)
		}
		hooks.wait(text, func(e hookEvent) bool { return e.str("event") == "message.upsert" && e.str("whatsapp_id") == id })
		return id
	}
	send(wasim.AddressLIDHidden, "who am I")
	send(wasim.AddressLIDWithPhone, "it's Alice")
	ev := hooks.wait("contact.identity", func(e hookEvent) bool { return e.str("event") == "contact.identity" })
	if ev.str("phone") != alice || ev.str("lid") != contact.LID().String() || ev.str("push_name") != "Alice" {
		t.Errorf("contact.identity %v", ev.Payload)
	}
	send(wasim.AddressLIDWithPhone, "again")
	n := 0
	for _, e := range hooks.all() {
		if e.str("event") == "contact.identity" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d contact.identity events, want 1", n)
	}
}
