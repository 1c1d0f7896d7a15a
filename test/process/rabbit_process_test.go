package process

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// A RabbitMQ subscription made through the admin API of the bridge binary
// declares its exchange and delivers a contact's message to a consumer's
// queue bound by routing key: <prefix>.<the linked account>.<event type>,
// persistent, its message id the webhook-id.
func TestRabbitMQSubscriptionDeliversToABoundQueue(t *testing.T) {
	r := testutil.StartRabbitMQ(t)
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	sub := `{"id":"rabbit","target":"` + r.URL() + `/?exchange=events&prefix=wa","events":["message.upsert"]}`
	if code, raw := request(t, http.MethodPost, "http://"+p.addr+"/api/admin/subscriptions", testAdminToken, "application/json", sub, nil); code != http.StatusCreated {
		t.Fatalf("an amqp:// subscription: %d %s", code, raw)
	}
	deliveries := consumeBound(t, r.URL()+"/", "events", "wa."+testAccount+".message.upsert")
	id := writeTo(t, sim.Contact(alice, "Alice"), "hello over RabbitMQ")
	select {
	case d := <-deliveries:
		var body struct {
			Event      string `json:"event"`
			WhatsAppID string `json:"whatsapp_id"`
			Text       string `json:"text"`
		}
		if err := json.Unmarshal(d.Body, &body); err != nil || body.WhatsAppID != id || body.Text != "hello over RabbitMQ" {
			t.Fatalf("body %s: %v", d.Body, err)
		}
		if d.MessageId == "" || d.Headers["webhook-id"] != d.MessageId || d.DeliveryMode != amqp.Persistent || d.Type != "message.upsert" {
			t.Errorf("message id %q, headers %v, mode %d, type %q", d.MessageId, d.Headers, d.DeliveryMode, d.Type)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no message in the bound queue after 30 s")
	}
}

// consumeBound binds a new durable queue to exchange (declared as the
// bridge declares it) for key and consumes it.
func consumeBound(t *testing.T, url, exchange, key string) <-chan amqp.Delivery {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare(exchange, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclare("inbox", true, false, false, false, nil)
	if err == nil {
		err = ch.QueueBind(q.Name, key, exchange, false, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(q.Name, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return deliveries
}
