package process

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// cloudDelivery is one Cloud webhook as a receiver got it: the raw body
// and the request's headers, lower-cased as Node servers hand them over.
type cloudDelivery struct {
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
}

// recordingCloudReceiver answers Meta's verification handshake under its
// verify token and records it and every delivery whose signature verifies
// under the app secret, for a client library's own webhook code to parse.
type recordingCloudReceiver struct {
	t          *testing.T
	srv        *httptest.Server
	mu         sync.Mutex
	handshake  map[string]string
	deliveries []cloudDelivery
}

func newRecordingCloudReceiver(t *testing.T, secret []byte, verifyToken string) *recordingCloudReceiver {
	c := &recordingCloudReceiver{t: t}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if q := r.URL.Query(); r.Method == http.MethodGet {
			if q.Get("hub.mode") != "subscribe" || q.Get("hub.verify_token") != verifyToken {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			c.handshake = map[string]string{}
			for k := range q {
				c.handshake[k] = q.Get(k)
			}
			_, _ = io.WriteString(w, q.Get("hub.challenge"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get(cloudapi.SignatureHeader) != cloudapi.Sign(body, secret) {
			t.Errorf("a Cloud webhook whose signature does not verify: %s", body)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		apitest.ValidateSchema(t, "CloudWebhook", body)
		headers := map[string]string{}
		for k := range r.Header {
			headers[strings.ToLower(k)] = r.Header.Get(k)
		}
		c.deliveries = append(c.deliveries, cloudDelivery{Body: string(body), Headers: headers})
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// wait waits until a recorded delivery's body contains every one of parts.
func (c *recordingCloudReceiver) wait(what string, parts ...string) {
	c.t.Helper()
	testutil.Poll(c.t, 30*time.Second, func() (int, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.deliveries), slices.ContainsFunc(c.deliveries, func(d cloudDelivery) bool {
			return !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(d.Body, p) })
		})
	}, "no Cloud webhook of %s", what)
}

// save writes the handshake and the deliveries to a file.
func (c *recordingCloudReceiver) save(t *testing.T) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	data, _ := json.Marshal(map[string]any{"handshake": c.handshake, "deliveries": c.deliveries})
	file := filepath.Join(t.TempDir(), "hooks.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// sdkFiles serves the samples a client library uploads or sends by link.
func sdkFiles(t *testing.T) *httptest.Server {
	files := map[string][]byte{"photo.png": cloudPNG, "report.pdf": cloudPDF, "note.ogg": cloudOpus, "clip.mp4": cloudMP4}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[strings.TrimPrefix(r.URL.Path, "/files/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cloudSDKDir is hack/cloudsdk with its packages installed.
func cloudSDKDir(t *testing.T) string { return npmClientDir(t, "cloudsdk") }

// greatDetailArrivals is what the contact's phone shows for each message
// greatdetail.mjs sends, by its name there.
var greatDetailArrivals = map[string]func(m *wasim.Message, sent map[string]string) bool{
	"text": func(m *wasim.Message, _ map[string]string) bool { return m.Text() == "hello from great-detail" },
	"reply": func(m *wasim.Message, s map[string]string) bool {
		return m.Quoted() != nil && m.Quoted().ID == s["text"]
	},
	"buttons": func(m *wasim.Message, _ map[string]string) bool {
		return fmt.Sprint(m.Buttons()) == "[{gd:yes Yes} {gd:no Tomorrow}]"
	},
	"image by id": func(m *wasim.Message, _ map[string]string) bool {
		return m.Content().GetImageMessage().GetCaption() == "a photo"
	},
	"document by id": func(m *wasim.Message, _ map[string]string) bool {
		return m.Content().GetDocumentMessage().GetFileName() == "q3.pdf"
	},
	"audio by id": func(m *wasim.Message, _ map[string]string) bool { return m.Content().GetAudioMessage() != nil },
	"video by id": func(m *wasim.Message, _ map[string]string) bool {
		return m.Content().GetVideoMessage().GetCaption() == "a clip"
	},
	"image by link": func(m *wasim.Message, _ map[string]string) bool {
		return m.Content().GetImageMessage().GetCaption() == "linked"
	},
	"document by link": func(m *wasim.Message, _ map[string]string) bool {
		return m.Content().GetDocumentMessage().GetFileName() == "linked.pdf"
	},
	"audio by link": func(m *wasim.Message, _ map[string]string) bool { return m.Content().GetAudioMessage() != nil },
	"video by link": func(m *wasim.Message, _ map[string]string) bool { return m.Content().GetVideoMessage() != nil },
	"location":      func(m *wasim.Message, _ map[string]string) bool { return m.Location().GetName() == "Office" },
	"contacts":      func(m *wasim.Message, _ map[string]string) bool { return m.Contact().GetDisplayName() == "Bob B" },
	"reaction": func(m *wasim.Message, s map[string]string) bool {
		target, emoji, _, ok := m.Reaction()
		return ok && target == s["text"] && emoji == "👍"
	},
	"template": func(m *wasim.Message, _ map[string]string) bool { return m.Text() == "Hi Zed, order 42 is ready, Zed" },
}

// @great-detail/whatsapp (pinned in hack/cloudsdk's package-lock.json),
// used unchanged with only the bridge's address as its base URL, so its
// default Graph version resolves to unversioned paths (POST
// /{phone}/messages): it sends every type the door takes (text, reply,
// reply buttons, image/document/audio/video by uploaded id and by link,
// location, contacts, reaction, a NAMED template filled by parameter_name
// with a repeated placeholder), marks a message read, and its sends arrive
// as what they are. Then its own webhook handler takes the handshake and
// the real Cloud webhooks a cloud subscription delivered, signatures
// checked: the incoming text, a read status, the tap on its buttons and
// the failed status (131026) of a send to a number not on WhatsApp.
func TestCloudSDKGreatDetail(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: installs and runs a Node library")
	}
	const appSecret, verifyToken = "0123456789abcdef0123456789abcdef", "gd-verify"
	sim := wasim.Start(t)
	files := sdkFiles(t)
	p := linkedBridge(t, sim, t.TempDir(), "CLOUD_MEDIA_HOSTS="+strings.TrimPrefix(files.URL, "http://"))
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsRead)
	hooks := newRecordingCloudReceiver(t, []byte(appSecret), verifyToken)
	sub := `{"id":"great-detail","target":"` + hooks.srv.URL + `/webhook","format":"cloud","events":["message.upsert","message.status"],` +
		`"secret":"` + appSecret + `","credentials":{"token":"` + verifyToken + `"}}`
	if code, raw := request(t, http.MethodPost, "http://"+p.addr+"/api/admin/subscriptions", testAdminToken, "application/json", sub, nil); code != http.StatusCreated {
		t.Fatalf("the cloud subscription: %d %s", code, raw)
	}
	readID := writeTo(t, contact, "read me")
	hooks.wait("message "+readID, `"id":"`+readID+`"`)

	dir := cloudSDKDir(t)
	const nobody = "4915100009999"
	env := append(os.Environ(), "BRIDGE_URL=http://"+p.addr, "TOKEN="+testAPIKey, "APP_SECRET="+appSecret, "PHONE_ID="+testAccount,
		"TO="+alice, "WABA="+cloudapi.WABAID(testAccount), "FILES_URL="+files.URL, "READ_ID="+readID, "NOBODY="+nobody)
	var out struct {
		Sent   map[string]string `json:"sent"`
		Failed string            `json:"failed"`
	}
	if raw := runIn(t, dir, env, "node", "greatdetail.mjs", "send"); json.Unmarshal(raw, &out) != nil {
		t.Fatalf("the library printed %q", raw)
	}
	for name, arrived := range greatDetailArrivals {
		if m := receive(t, contact, out.Sent[name]); !arrived(m, out.Sent) {
			t.Errorf("%s (%s): the contact got %v", name, out.Sent[name], m.Content())
		}
	}
	if len(out.Sent) != len(greatDetailArrivals) {
		t.Errorf("sent %v", out.Sent)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tap, err := contact.Tap(ctx, receive(t, contact, out.Sent["buttons"]), "gd:no")
	if err != nil {
		t.Fatal(err)
	}
	hooks.wait("the tap "+tap, `"id":"`+tap+`"`)
	hooks.wait("the read status of "+out.Sent["text"], `"id":"`+out.Sent["text"]+`"`, `"status":"read"`)
	hooks.wait("the failed status of "+out.Failed, `"id":"`+out.Failed+`"`, `"status":"failed"`)

	env = append(env, "HOOKS_FILE="+hooks.save(t))
	checkGreatDetailHooks(t, runIn(t, dir, env, "node", "greatdetail.mjs", "hooks"), verifyToken, map[string]string{
		"message " + readID:                    "text from " + alice + " Alice read me",
		"message " + tap:                       "interactive from " + alice + " Alice reply gd:no to " + out.Sent["buttons"],
		"status " + out.Sent["text"] + " read": "read to " + alice,
		"status " + out.Failed + " failed":     "failed to " + nobody + " code 131026",
	})
}

// checkGreatDetailHooks checks what the library's webhook handler parsed
// against want, by event key.
func checkGreatDetailHooks(t *testing.T, raw []byte, verifyToken string, want map[string]string) {
	t.Helper()
	var seen struct {
		VerifyToken string `json:"verifyToken"`
		Challenge   bool   `json:"challenge"`
		Events      []struct {
			Kind, ID, Type, From, Text, Reply, Context, Name, Status, Recipient string
			Code                                                                int
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &seen); err != nil {
		t.Fatalf("the library printed %q: %v", raw, err)
	}
	if seen.VerifyToken != verifyToken || !seen.Challenge {
		t.Errorf("the handshake as the library read it: %s", raw)
	}
	got := map[string]string{}
	for _, e := range seen.Events {
		switch e.Kind {
		case "message":
			s := e.Type + " from " + e.From + " " + e.Name
			if e.Text != "" {
				s += " " + e.Text
			}
			if e.Reply != "" {
				s += " reply " + e.Reply + " to " + e.Context
			}
			got["message "+e.ID] = s
		case "status":
			s := e.Status + " to " + e.Recipient
			if e.Code != 0 {
				s += fmt.Sprintf(" code %d", e.Code)
			}
			got["status "+e.ID+" "+e.Status] = s
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s parsed as %q, want %q", k, got[k], w)
		}
	}
}
