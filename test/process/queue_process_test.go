package process

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// A short schedule: the retries of the production 5s,15s,60s in 1/25 of the time.
const shortSchedule = "RETRY_SCHEDULE=200ms,600ms,2400ms"

func textBody(t *testing.T, number, text string) (string, []byte) {
	t.Helper()
	return multipartBody(t, part{name: "number", value: number}, part{name: "type[]", value: "text"}, part{name: "text[]", value: text})
}

// Sends the simulator fails on command take one retry each, on the
// schedule, and after the last retry the message is Failed.
func TestRetryScheduleCountsRetries(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir(), shortSchedule)
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsNone) // statuses stay at Sent
	me := sim.Phone(testAccount)
	// Warm the device-list cache so that every injected failure is an ack error.
	if code, body := sendText(t, p, alice, "warm up"); code != http.StatusOK {
		t.Fatalf("warm up: %d %s", code, body)
	}

	for _, failures := range []int{1, 2, 3, 4} {
		t.Run(strconv.Itoa(failures)+" failures", func(t *testing.T) {
			me.FailSends(failures, wasim.FailAck, 500)
			start := time.Now()
			code, raw := sendText(t, p, alice, "try "+strconv.Itoa(failures))
			if code != http.StatusAccepted {
				t.Fatalf("send: %d %s", code, raw)
			}
			resp := decode[sendResponse](t, raw)
			if m := resp.Messages[0]; m.Status != "Queued" || m.RetryCount != 0 {
				t.Fatalf("response %+v", m)
			}
			id := resp.Messages[0].ID
			final := waitMessage(t, p, id, "a final status", func(e logEntry) bool { return e.Status != "Queued" })
			elapsed := time.Since(start)
			want := map[int]struct {
				status   string
				retries  int
				earliest time.Duration
			}{
				1: {"Sent", 1, 200 * time.Millisecond},
				2: {"Sent", 2, 800 * time.Millisecond},
				3: {"Sent", 3, 3200 * time.Millisecond},
				4: {"Failed", 3, 3200 * time.Millisecond},
			}[failures]
			if final.Status != want.status || final.RetryCount != want.retries || final.Attempts != want.retries+1 {
				t.Errorf("final %+v, want %s after %d retries", final, want.status, want.retries)
			}
			if elapsed < want.earliest {
				t.Errorf("finished after %v, before the schedule allows (%v)", elapsed, want.earliest)
			}
			if want.status == "Failed" && final.LastError == "" {
				t.Error("a Failed message has no last_error")
			}
			if want.status == "Sent" {
				receive(t, contact, final.WhatsAppID)
			}
		})
	}
}

// sendText posts one text message with the API key header.
func sendText(t *testing.T, p *bridgeProcess, number, text string, headers ...string) (int, string) {
	t.Helper()
	ct, body := textBody(t, number, text)
	return send(t, p, ct, body, headers...)
}

// kill -9 while a message waits for its retry: after the restart it is sent,
// with the WhatsApp ID chosen before the crash.
func TestQueueSurvivesKill9(t *testing.T) {
	sim := wasim.Start(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, "RETRY_SCHEDULE=1s,1s,1s")
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsNone)
	me := sim.Phone(testAccount)
	me.FailSends(100, wasim.FailAck, 500)

	code, raw := sendText(t, p, alice, "survive")
	if code != http.StatusAccepted {
		t.Fatalf("send: %d %s", code, raw)
	}
	first := decode[sendResponse](t, raw).Messages[0]
	p.kill()
	me.ClearFaults()

	p2 := startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), "RETRY_SCHEDULE=1s,1s,1s"))
	final := waitMessage(t, p2, first.ID, "sent", func(e logEntry) bool { return e.Status != "Queued" })
	if !sentOrBeyond(final.Status) || final.WhatsAppID != first.WhatsAppID {
		t.Fatalf("after restart %+v, want Sent (or a receipt's status) with whatsapp_id %s", final, first.WhatsAppID)
	}
	if got := receive(t, contact, first.WhatsAppID); got.Text() != "survive" {
		t.Errorf("text %q", got.Text())
	}
}

func TestIdempotencyKeyRepeatsTheFirstResponse(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	contact := sim.Contact(alice, "Alice")
	ct, body := textBody(t, alice, "once")
	code1, raw1 := send(t, p, ct, body, "Idempotency-Key: order-42")
	code2, raw2 := send(t, p, ct, body, "Idempotency-Key: order-42")
	if code1 != http.StatusOK || code2 != code1 || raw2 != raw1 {
		t.Fatalf("first %d %s, repeat %d %s", code1, raw1, code2, raw2)
	}
	code3, raw3 := send(t, p, ct, body, "Idempotency-Key: order-43")
	if code3 != http.StatusOK || raw3 == raw1 {
		t.Fatalf("another key: %d %s", code3, raw3)
	}
	receive(t, contact, decode[sendResponse](t, raw3).Messages[0].WhatsAppID)
	// Only two messages reached the contact.
	var texts []string
	for _, m := range contact.Received() {
		texts = append(texts, m.Text())
	}
	if len(texts) != 2 {
		t.Errorf("the contact received %q", texts)
	}
	if code, raw := send(t, p, ct, body, "Idempotency-Key: has space"); code != http.StatusBadRequest || !strings.Contains(raw, "invalid_idempotency_key") {
		t.Errorf("bad key: %d %s", code, raw)
	}
}

func TestSendValidation(t *testing.T) {
	sim := wasim.Start(t)
	p := startBridge(t, simBridgeBin, append(simEnv(sim, t.TempDir()), "MAX_FILE_SIZE=4KiB"))
	big := bytes.Repeat([]byte("x"), 5000)
	cases := []struct {
		name  string
		parts []part
		want  int
		code  string
	}{
		{"unknown type", []part{{name: "number", value: alice}, {name: "type[]", value: "sticker"}}, 400, "unknown_type"},
		{"video without its file", []part{{name: "number", value: alice}, {name: "type[]", value: "video"}}, 400, "missing_file"},
		{"no type", []part{{name: "number", value: alice}}, 400, "missing_type"},
		{"image without file", []part{{name: "number", value: alice}, {name: "type[]", value: "image"}}, 400, "missing_file"},
		{"file without media", []part{{name: "number", value: alice}, {name: "type[]", value: "text"}, {name: "text[]", value: "x"}, {name: "file[]", fileName: "a.pdf", data: pdfData[:100]}}, 400, "unexpected_file"},
		{"empty text", []part{{name: "number", value: alice}, {name: "type[]", value: "text"}, {name: "text[]", value: "  "}}, 400, "empty_text"},
		{"missing text", []part{{name: "number", value: alice}, {name: "type[]", value: "text"}}, 400, "empty_text"},
		{"invalid number", []part{{name: "number", value: "12ab"}, {name: "type[]", value: "text"}, {name: "text[]", value: "x"}}, 400, "invalid_number"},
		{"bad group", []part{{name: "number", value: "abc@g.us"}, {name: "type[]", value: "text"}, {name: "text[]", value: "x"}}, 400, "invalid_number"},
		{"image that is not an image", []part{{name: "number", value: alice}, {name: "type[]", value: "image"}, {name: "file[]", fileName: "a.png", data: pdfData[:100]}}, 400, "invalid_image"},
		{"unknown field", []part{{name: "number", value: alice}, {name: "colour", value: "red"}}, 400, "unknown_field"},
		{"oversize file", []part{{name: "number", value: alice}, {name: "type[]", value: "document"}, {name: "file[]", fileName: "big.txt", data: big}}, 413, "file_too_large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct, body := multipartBody(t, c.parts...)
			code, raw := send(t, p, ct, body)
			if code != c.want || !strings.Contains(raw, `"code":"`+c.code+`"`) {
				t.Errorf("%d %s; want %d %s", code, raw, c.want, c.code)
			}
		})
	}
	// Wrong content type, wrong key in header, wrong key in body.
	if code, raw := send(t, p, "application/json", []byte(`{}`)); code != http.StatusUnsupportedMediaType {
		t.Errorf("json body: %d %s", code, raw)
	}
	ct, body := textBody(t, alice, "x")
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.addr+"/send", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("X-Api-Key", "wrong-key-0123456789")
	if resp, err := apitest.Client(t).Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong header key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	ct, body = multipartBody(t, part{name: "apiKey", value: "wrong-key-0123456789"}, part{name: "number", value: alice}, part{name: "type[]", value: "text"}, part{name: "text[]", value: "x"})
	req, _ = http.NewRequest(http.MethodPost, "http://"+p.addr+"/send", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	if resp, err := apitest.Client(t).Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong body key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Nothing was stored by any rejected request.
	var list struct{ Messages []logEntry }
	request(t, http.MethodGet, "http://"+p.addr+"/api/messages?apiKey="+testAPIKey, "", "", "", &list)
	if len(list.Messages) != 0 {
		t.Errorf("rejected requests stored %d messages", len(list.Messages))
	}
}

// An oversize attachment is refused while it streams: the answer comes
// before the client has sent the rest of the body.
func TestOversizeFileRejectedWhileStreaming(t *testing.T) {
	sim := wasim.Start(t)
	p := startBridge(t, simBridgeBin, append(simEnv(sim, t.TempDir()), "MAX_FILE_SIZE=1MiB"))
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "--B\r\nContent-Disposition: form-data; name=\"number\"\r\n\r\n" + alice + "\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"type[]\"\r\n\r\ndocument\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"big.bin\"\r\n\r\n"
	const declared = 1 << 30 // a 1 GiB body that the client will never finish
	_, err = io.WriteString(conn, "POST /send HTTP/1.1\r\nHost: x\r\nX-Api-Key: "+testAPIKey+
		"\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: "+strconv.Itoa(declared)+"\r\n\r\n"+head)
	if err != nil {
		t.Fatal(err)
	}
	// Send 2 MiB of the file, then wait for the answer without sending more.
	chunk := bytes.Repeat([]byte("z"), 64<<10)
	for range 32 {
		if _, err := conn.Write(chunk); err != nil {
			break // the server may already have answered and closed
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body ended: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(raw), "file_too_large") {
		t.Errorf("%d %s", resp.StatusCode, raw)
	}
	_ = context.Background()
}

func TestMessageLogPagination(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	sim.Contact(alice, "Alice").SetReceiptMode(wasim.ReceiptsNone)
	var ids []string
	for i := range 5 {
		code, raw := sendText(t, p, alice, "m"+strconv.Itoa(i))
		if code != http.StatusOK {
			t.Fatalf("send: %d %s", code, raw)
		}
		ids = append(ids, decode[sendResponse](t, raw).Messages[0].ID)
	}
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		var out struct {
			Messages   []logEntry
			NextCursor string `json:"next_cursor"`
		}
		url := "http://" + p.addr + "/api/messages?limit=2&status=Sent&apiKey=" + testAPIKey
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		if code, body := request(t, http.MethodGet, url, "", "", "", &out); code != http.StatusOK {
			t.Fatalf("page %d: %d %s", page, code, body)
		}
		for _, m := range out.Messages {
			seen = append(seen, m.ID)
		}
		if out.NextCursor == "" {
			break
		}
		cursor = out.NextCursor
	}
	if len(seen) != 5 {
		t.Fatalf("paged through %v", seen)
	}
	for i := range seen { // newest first
		if seen[i] != ids[len(ids)-1-i] {
			t.Errorf("order %v, want the reverse of %v", seen, ids)
			break
		}
	}
	for _, bad := range []string{"limit=0", "limit=501", "status=Sending", "since=yesterday", "cursor=!!", "x=1"} {
		var e struct{ Error struct{ Code string } }
		if code, body := request(t, http.MethodGet, "http://"+p.addr+"/api/messages?apiKey="+testAPIKey+"&"+bad, "", "", "", &e); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
	if code, _ := request(t, http.MethodGet, "http://"+p.addr+"/api/messages/nope?apiKey="+testAPIKey, "", "", "", nil); code != http.StatusNotFound {
		t.Errorf("unknown id: %d", code)
	}
	if code, _ := request(t, http.MethodGet, "http://"+p.addr+"/api/messages", "", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("no key: %d", code)
	}
}
