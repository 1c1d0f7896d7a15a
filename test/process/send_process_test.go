package process

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const (
	testAPIKey = "api-key-0123456789abcdef"
	alice      = "4915100000002"
)

// linkedBridge starts a simulator-wired bridge with extra settings and links
// it to testAccount by QR.
func linkedBridge(t testing.TB, sim *wasim.Simulator, dataDir string, extraEnv ...string) *bridgeProcess {
	t.Helper()
	p := startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), extraEnv...))
	wasimtest.LinkBridge(t, sim.Phone(testAccount), "http://"+p.addr, testAdminToken)
	waitAdminState(t, p, "connected", connected)
	return p
}

// part is one field of a multipart body; a file when fileName is set.
type part struct {
	name, value, fileName string
	data                  []byte
}

func multipartBody(t *testing.T, parts ...part) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		if p.fileName == "" && p.data == nil {
			if err := mw.WriteField(p.name, p.value); err != nil {
				t.Fatal(err)
			}
			continue
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.name, p.fileName))
		h.Set("Content-Type", "application/octet-stream") // the bridge sniffs instead
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

// sendResponse is the answer to a send or an action.
type sendResponse struct {
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
	Messages []sentItem `json:"messages"`
}

type sentItem struct {
	ID            string    `json:"id"`
	WhatsAppID    string    `json:"whatsapp_id"`
	Type          string    `json:"type"`
	Status        string    `json:"status"`
	RetryCount    int       `json:"retry_count"`
	Reason        string    `json:"reason"`
	QueuePosition int       `json:"queue_position"`
	ScheduledAt   time.Time `json:"scheduled_at"`
}

// send posts a body to /send with the API key in the header and extra
// headers as "Name: value" strings.
func send(t *testing.T, p *bridgeProcess, contentType string, body []byte, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+p.addr+"/send", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Api-Key", testAPIKey)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := apitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

type logEntry struct {
	ID         string `json:"id"`
	WhatsAppID string `json:"whatsapp_id"`
	Recipient  string `json:"recipient"`
	Type       string `json:"type"`
	Status     string `json:"status"`
	RetryCount int    `json:"retry_count"`
	Attempts   int    `json:"attempts"`
	LastError  string `json:"last_error"`
}

func getMessage(t *testing.T, p *bridgeProcess, id string) logEntry {
	t.Helper()
	var e logEntry
	if code, body := request(t, http.MethodGet, "http://"+p.addr+"/api/messages/"+id+"?apiKey="+testAPIKey, "", "", "", &e); code != http.StatusOK {
		t.Fatalf("GET message %s: %d %s", id, code, body)
	}
	return e
}

func waitMessage(t *testing.T, p *bridgeProcess, id, what string, ok func(logEntry) bool) logEntry {
	t.Helper()
	return testutil.Poll(t, 30*time.Second, func() (logEntry, bool) {
		e := getMessage(t, p, id)
		return e, ok(e)
	}, "message %s: waiting for %s", id, what)
}

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%q: %v", body, err)
	}
	return v
}

// sentOrBeyond: a message sent on its attempt, whose answer or log entry may
// already show the contact's receipt (the simulator's phones answer within
// milliseconds, before the bridge builds its answer on a loaded machine).
func sentOrBeyond(status string) bool {
	return status == "Sent" || status == "Delivered" || status == "Read"
}

// A tiny but real PNG and PDF: the bridge sniffs types from content.
var (
	pngData = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"), bytes.Repeat([]byte{7}, 2000)...)
	pdfData = append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("stream data\n"), 500)...)
)

func TestSendTextImageDocumentToContactAndGroup(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	contact := sim.Contact(alice, "Alice")
	group := sim.CreateGroup("Sales", sim.Phone(testAccount), contact, sim.Contact("4915100000003", "Bob"))

	for _, to := range []struct{ name, number string }{{"group", group.JID().String()}, {"contact", "+49 151 0000 0002"}} {
		t.Run(to.name, func(t *testing.T) {
			ct, body := multipartBody(t,
				part{name: "number", value: to.number},
				part{name: "type[]", value: "text"}, part{name: "text[]", value: `*Hello*\nline two _it_ ~st~`},
				part{name: "type[]", value: "image"}, part{name: "text[]", value: "a caption"},
				part{name: "type[]", value: "document"}, part{name: "text[]", value: ""},
				part{name: "file[]", fileName: "pixel.png", data: pngData},
				part{name: "file[]", fileName: `C:\reports\Q3 report.pdf`, data: pdfData},
			)
			code, raw := send(t, p, ct, body)
			if code != http.StatusOK {
				t.Fatalf("send: %d %s", code, raw)
			}
			resp := decode[sendResponse](t, raw)
			if len(resp.Messages) != 3 {
				t.Fatalf("response %s", raw)
			}
			for i, typ := range []string{"text", "image", "document"} {
				m := resp.Messages[i]
				if m.Type != typ || !sentOrBeyond(m.Status) || m.RetryCount != 0 || m.ID == "" || m.WhatsAppID == "" {
					t.Errorf("item %d: %+v", i, m)
				}
			}

			got := receive(t, contact, resp.Messages[0].WhatsAppID)
			if got.Text() != "*Hello*\nline two _it_ ~st~" {
				t.Errorf("text %q", got.Text())
			}
			img := receive(t, contact, resp.Messages[1].WhatsAppID)
			if img.Media == nil || img.Media.MimeType != "image/png" || img.Media.Caption != "a caption" || !bytes.Equal(img.Media.Data, pngData) {
				t.Errorf("image: %+v", img.Media)
			}
			doc := receive(t, contact, resp.Messages[2].WhatsAppID)
			if doc.Media == nil || doc.Media.MimeType != "application/pdf" || doc.Media.FileName != "Q3 report.pdf" ||
				sha256.Sum256(doc.Media.Data) != sha256.Sum256(pdfData) {
				t.Errorf("document: %+v", doc.Media)
			}
			// WhatsApp sees a direct message addressed to the contact's LID
			// (whatsmeow since 2026); the log keeps the number it was sent to.
			wantChat, seenChat := alice+"@s.whatsapp.net", contact.LID().String()
			if to.name == "group" {
				wantChat, seenChat = group.JID().String(), group.JID().String()
			}
			if doc.Chat.String() != seenChat {
				t.Errorf("chat %s, want %s", doc.Chat, seenChat)
			}
			if e := getMessage(t, p, resp.Messages[0].ID); e.Recipient != wantChat || e.Attempts != 1 {
				t.Errorf("log entry %+v", e)
			}
		})
	}
}

func receive(t *testing.T, u *wasim.User, whatsappID string) *wasim.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := u.WaitMessage(ctx, whatsappID)
	if err != nil {
		t.Fatalf("message %s never arrived: %v", whatsappID, err)
	}
	if m.Err != nil {
		t.Fatalf("message %s did not decrypt: %v", whatsappID, m.Err)
	}
	return m
}

func TestURLEncodedTextAndReceipts(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsRead)
	form := url.Values{"number": {alice}, "type[]": {"text"}, "text[]": {"hi"}, "apiKey": {testAPIKey}}
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.addr+"/send", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := apitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("send: %d %s", resp.StatusCode, raw)
	}
	id := decode[sendResponse](t, string(raw)).Messages[0].ID
	waitMessage(t, p, id, "Read", func(e logEntry) bool { return e.Status == "Read" })
}
