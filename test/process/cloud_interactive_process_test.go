package process

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// cloudReceiver is a Cloud API webhook receiver: it answers Meta's
// verification handshake when hub.verify_token is its own (as Chatwoot's
// MetaTokenVerifyConcern does) and takes the deliveries whose
// X-Hub-Signature-256 verifies under the app secret.
type cloudReceiver struct {
	t      *testing.T
	secret []byte
	srv    *httptest.Server
	bodies chan []byte
}

func newCloudReceiver(t *testing.T, secret []byte, verifyToken string) *cloudReceiver {
	c := &cloudReceiver{t: t, secret: secret, bodies: make(chan []byte, 64)}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); r.Method == http.MethodGet {
			if q.Get("hub.mode") != "subscribe" || q.Get("hub.verify_token") != verifyToken {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			_, _ = io.WriteString(w, q.Get("hub.challenge"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get(cloudapi.SignatureHeader) != cloudapi.Sign(body, c.secret) {
			t.Errorf("a Cloud webhook whose signature does not verify: %s", body)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		apitest.ValidateSchema(t, "CloudWebhook", body)
		c.bodies <- body
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// cloudHookMessage is one received message of a Cloud webhook.
type cloudHookMessage struct {
	From    string `json:"from"`
	ID      string `json:"id"`
	Type    string `json:"type"`
	Context struct {
		ID string `json:"id"`
	} `json:"context"`
	Interactive struct {
		Type        string `json:"type"`
		ButtonReply struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"button_reply"`
	} `json:"interactive"`
}

// await waits for the Cloud webhook whose value match accepts and returns
// that value, decoded into a fresh V; V names the fields a test reads.
func await[V any](c *cloudReceiver, what string, match func(V) bool) V {
	c.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case body := <-c.bodies:
			var hook struct {
				Entry []struct {
					Changes []struct {
						Value V `json:"value"`
					} `json:"changes"`
				} `json:"entry"`
			}
			if err := json.Unmarshal(body, &hook); err != nil || len(hook.Entry) == 0 || len(hook.Entry[0].Changes) == 0 {
				c.t.Fatalf("a Cloud webhook that is not Cloud's shape: %s", body)
			}
			if v := hook.Entry[0].Changes[0].Value; match(v) {
				return v
			}
		case <-deadline:
			c.t.Fatalf("no Cloud webhook of %s", what)
		}
	}
}

// message waits for the webhook carrying the received message id.
func (c *cloudReceiver) message(id string) cloudHookMessage {
	c.t.Helper()
	type value struct {
		Messages []cloudHookMessage `json:"messages"`
	}
	v := await(c, "message "+id, func(v value) bool { return len(v.Messages) > 0 && v.Messages[0].ID == id })
	return v.Messages[0]
}

// Reply buttons sent through the Cloud door in the shapes Chatwoot and
// Typebot send them go out as the bridge's own reply buttons: the
// simulated contact's phone shows them (the native-flow message with its
// <biz> node), a tap comes back to a Cloud subscription (verified with
// the receiver's own verify token) as Cloud's interactive button_reply
// quoting the message, a repeated
// Idempotency-Key sends nothing twice, and a list is refused with Cloud's
// error, nothing queued.
func TestCloudReplyButtonsRenderAndTapsArrive(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	contact := sim.Contact(alice, "Alice")
	secret, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(testWebhookSecret, "whsec_"))
	cloud := newCloudReceiver(t, secret, "cw-verify")
	sub := `{"id":"chatwoot","target":"` + cloud.srv.URL + `/webhooks/whatsapp","format":"cloud","events":["message.upsert"],"secret":"` +
		testWebhookSecret + `","credentials":{"token":"cw-verify"}}`
	if code, raw := request(t, http.MethodPost, "http://"+p.addr+"/api/admin/subscriptions", testAdminToken, "application/json", sub, nil); code != http.StatusCreated {
		t.Fatalf("the cloud subscription: %d %s", code, raw)
	}

	// Chatwoot's input_select (v13.0, the action as a JSON string), with
	// a header and footer as Kapso's builder adds them.
	chatwoot := `{"messaging_product":"whatsapp","to":"` + alice + `","type":"interactive","interactive":{"type":"button",` +
		`"header":{"type":"text","text":"Acme"},"body":{"text":"How can we help?"},"footer":{"text":"Mon-Fri"},` +
		`"action":"{\"buttons\":[{\"type\":\"reply\",\"reply\":{\"id\":\"sales\",\"title\":\"Talk to sales\"}},{\"type\":\"reply\",\"reply\":{\"id\":\"support\",\"title\":\"Support\"}}]}"}}`
	id := cloudButtons(t, p, "v13.0", chatwoot, "cw-1")
	if again := cloudButtons(t, p, "v13.0", chatwoot, "cw-1"); again != id {
		t.Errorf("a repeated Idempotency-Key answered %s, then %s", id, again)
	}
	shown := receive(t, contact, id)
	if got := fmt.Sprint(shown.Buttons()); got != "[{sales Talk to sales} {support Support}]" ||
		shown.Content().GetInteractiveMessage().GetBody().GetText() != "*Acme*\n\nHow can we help?\n\n_Mon-Fri_" {
		t.Fatalf("the contact's phone shows %s under %q", got, shown.Content().GetInteractiveMessage().GetBody().GetText())
	}
	// Typebot's choice input (v17.0).
	typebot := cloudButtons(t, p, "v17.0", `{"messaging_product":"whatsapp","to":"`+alice+`","type":"interactive","interactive":{"type":"button",`+
		`"body":{"text":"Pick a size"},"action":{"buttons":[{"type":"reply","reply":{"id":"cm1a","title":"Small"}},{"type":"reply","reply":{"id":"cm1b","title":"Large"}}]}}}`, "")
	if got := fmt.Sprint(receive(t, contact, typebot).Buttons()); got != "[{cm1a Small} {cm1b Large}]" {
		t.Errorf("Typebot's buttons show as %s", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tap, err := contact.Tap(ctx, shown, "support")
	if err != nil {
		t.Fatal(err)
	}
	m := cloud.message(tap)
	if m.Type != "interactive" || m.Interactive.Type != "button_reply" || m.Interactive.ButtonReply.ID != "support" ||
		m.Interactive.ButtonReply.Title != "Support" || m.Context.ID != id || m.From != alice {
		t.Errorf("the tap arrived as %+v", m)
	}
	cloudListRefused(t, p)
}

// cloudButtons posts a Cloud message body (with an Idempotency-Key unless
// "") and returns its id.
func cloudButtons(t *testing.T, p *bridgeProcess, version, body, key string) string {
	t.Helper()
	var headers []string
	if key != "" {
		headers = append(headers, "Idempotency-Key: "+key)
	}
	code, raw := cloudCall(t, p, http.MethodPost, "/"+version+"/"+testAccount+"/messages", "application/json", []byte(body), testAPIKey, headers...)
	var sent cloudSent
	if code != http.StatusOK || json.Unmarshal(raw, &sent) != nil || len(sent.Messages) != 1 {
		t.Fatalf("%s: %d %s", body, code, raw)
	}
	return sent.Messages[0].ID
}

// cloudListRefused: a list (Chatwoot sends one for more than three
// items) is refused with Cloud's 131051, and nothing is queued.
func cloudListRefused(t *testing.T, p *bridgeProcess) {
	t.Helper()
	var before, after struct{ Messages []json.RawMessage }
	apiJSON(t, p, http.MethodGet, "/api/messages?limit=50", "", &before)
	list := `{"messaging_product":"whatsapp","to":"` + alice + `","type":"interactive","interactive":{"type":"list","body":{"text":"Pick"},` +
		`"action":"{\"button\":\"Options\",\"sections\":[{\"rows\":[{\"id\":\"a\",\"title\":\"A\"},{\"id\":\"b\",\"title\":\"B\"},{\"id\":\"c\",\"title\":\"C\"},{\"id\":\"d\",\"title\":\"D\"}]}]}"}}`
	code, raw := cloudCall(t, p, http.MethodPost, "/v13.0/"+testAccount+"/messages", "application/json", []byte(list), testAPIKey)
	var g graphError
	if code != http.StatusBadRequest || json.Unmarshal(raw, &g) != nil || g.Error.Code != cloudapi.CodeUnsupportedType ||
		g.Error.BridgeCode != "unsupported_interactive" || !strings.Contains(string(raw), "reply buttons") {
		t.Errorf("a list: %d %s", code, raw)
	}
	apiJSON(t, p, http.MethodGet, "/api/messages?limit=50", "", &after)
	if len(after.Messages) != len(before.Messages) {
		t.Errorf("the refused list was queued: %d messages, then %d", len(before.Messages), len(after.Messages))
	}
}
