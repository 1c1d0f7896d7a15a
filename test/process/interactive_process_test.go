package process

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// A text with reply buttons through the API goes out with the <biz> node a
// phone needs to render it, so the contact's phone shows the buttons; a tap
// on one arrives as message.upsert of type button_reply with the button's
// id, quoting the message.
func TestReplyButtonsRenderAndTapsArrive(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	contact := sim.Contact(alice, "Alice")
	code, raw := apiJSON(t, p, "POST", "/api/messages", `{"to":"`+alice+`","type":"buttons","text":"Your order is ready. Deliver today?",
		"buttons":[{"id":"order-17:yes","title":"Yes, today"},{"id":"order-17:no","title":"Tomorrow"}]}`, nil)
	if code != http.StatusOK {
		t.Fatalf("send buttons: %d %s", code, raw)
	}
	sent := decode[sendResponse](t, raw).Messages[0]
	shown := receive(t, contact, sent.WhatsAppID)
	if got := fmt.Sprint(shown.Buttons()); got != "[{order-17:yes Yes, today} {order-17:no Tomorrow}]" ||
		shown.Content().GetInteractiveMessage().GetBody().GetText() != "Your order is ready. Deliver today?" {
		t.Fatalf("the contact's phone shows %s under %q (biz %v)", got, shown.Content().GetInteractiveMessage().GetBody().GetText(), shown.Biz)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tap, err := contact.Tap(ctx, shown, "order-17:no")
	if err != nil {
		t.Fatal(err)
	}
	ev := hooks.wait("the tap "+tap, func(e hookEvent) bool { return e.str("whatsapp_id") == tap })
	if ev.str("event") != "message.upsert" || ev.str("type") != "button_reply" || ev.str("reply_id") != "order-17:no" ||
		ev.str("text") != "Tomorrow" || ev.str("quoted") != sent.WhatsAppID || ev.str("from") != alice {
		t.Errorf("the tap arrived as %+v", ev.Payload)
	}
}
