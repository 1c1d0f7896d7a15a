package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/httpapi/public"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/internal/fakes"
)

const apiKey = "api-key-0123456789abcdef"

// queuedMessages accepts every send as queued.
type queuedMessages struct{ messaging.Messages }

func (queuedMessages) Submit(_ context.Context, req sendqueue.Request) (sendqueue.Result, error) {
	var res sendqueue.Result
	for i, it := range req.Items {
		res.Messages = append(res.Messages, bridge.Message{ID: fmt.Sprint(i), Type: it.Type, Status: bridge.StatusQueued})
	}
	return res, nil
}

// from dials from a loopback address of its own (Linux answers all of
// 127/8), so that the server sees distinct client addresses.
func from(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
}

// trickle is a stranger: it announces a 1 MB POST /send without any key
// and sends a byte every few milliseconds, opening a new connection each
// time the server drops one, until stop.
func trickle(addr, ip string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := from(ip).Dial("tcp", addr)
		if err != nil {
			time.Sleep(20 * time.Millisecond) //nolint:forbidigo // a stranger's pace, not a wait for an event
			continue
		}
		_, err = fmt.Fprintf(c, "POST /send HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 1000000\r\n\r\n--B\r\n")
		for err == nil {
			select {
			case <-stop:
				_ = c.Close()
				return
			case <-time.After(50 * time.Millisecond):
			}
			_, err = c.Write([]byte("x"))
		}
		_ = c.Close()
	}
}

// Item 1: 300 strangers trickling keyless bodies from three addresses hold
// no door shut: every send with the key in the body (multipart with a file
// large enough to need an upload slot, and urlencoded) and every dashboard
// sign-in succeeds.
func TestStrangersCannotHoldTheDoors(t *testing.T) {
	d := New(Options{Session: &fakes.Session{}, AdminToken: adminToken, Log: logr.Discard()})
	t.Cleanup(d.Close)
	srv := httptest.NewServer(httpapi.NewRouter(httpapi.Deps{
		Public: public.Deps{Link: &fakes.Session{}}, Admin: admin.Deps{Session: &fakes.Session{}}, Dashboard: d,
		Messaging: messaging.Deps{Messages: queuedMessages{},
			Send: messaging.SendConfig{SpoolDir: t.TempDir(), MaxFileSize: 1 << 20}},
		Credentials: httpapi.Credentials{APIKey: apiKey, AdminToken: adminToken,
			Guard: guard.NewCredentialsAllowing(httpkit.AuditRecorder{}, nil, 1000)},
		Limits: guard.Limits{BodyReadGap: 5 * time.Second, BodyDeadline: time.Minute, MaxUploads: 32, UploadsPerAddress: 4, KeyDeadline: 300 * time.Millisecond},
		Log:    logr.Discard(),
	}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() { trickle(addr, fmt.Sprintf("127.0.0.%d", 2+i%3), stop) })
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
	// The strangers are at the door before the callers come.
	time.Sleep(500 * time.Millisecond) //nolint:forbidigo // let the flood build; nothing is awaited
	client := &http.Client{Transport: &http.Transport{DialContext: from("127.0.0.9").DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ok := 0
	for i := range 10 {
		if status := post(t, client, srv.URL+"/send", multipartSend(t)); status != http.StatusAccepted {
			t.Errorf("multipart send %d with the key in the body: %d", i, status)
		} else {
			ok++
		}
		form := url.Values{"apiKey": {apiKey}, "number": {"4915100000002"}, "type": {"text"}, "text": {"hi"}}
		if status := post(t, client, srv.URL+"/send", urlencoded(form)); status != http.StatusAccepted {
			t.Errorf("urlencoded send %d with the key in the body: %d", i, status)
		} else {
			ok++
		}
		signIn := urlencoded(url.Values{"token": {adminToken}})
		signIn.loc = "/dashboard/"
		if status := post(t, client, srv.URL+"/dashboard/signin", signIn); status != http.StatusSeeOther {
			t.Errorf("sign-in %d: %d", i, status)
		} else {
			ok++
		}
	}
	t.Logf("with 300 trickling strangers: %d of 30 sends and sign-ins succeeded", ok)
}

type body struct {
	ct   string
	data []byte
	loc  string // the redirect a success answers with, if any
}

func urlencoded(v url.Values) body {
	return body{ct: "application/x-www-form-urlencoded", data: []byte(v.Encode())}
}

// multipartSend is a document send whose body (100 KiB) needs an upload
// slot, the key its first field.
func multipartSend(t *testing.T) body {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, kv := range [][2]string{{"apiKey", apiKey}, {"number", "4915100000002"}, {"type[]", "document"}} {
		_ = w.WriteField(kv[0], kv[1])
	}
	f, err := w.CreateFormFile("file[]", "notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(bytes.Repeat([]byte("notes "), 100<<10/6))
	_ = w.Close()
	return body{ct: w.FormDataContentType(), data: buf.Bytes()}
}

func post(t *testing.T, c *http.Client, u string, b body) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(b.data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", b.ct)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if b.loc != "" && resp.Header.Get("Location") != b.loc {
		t.Errorf("%s answered %d to %q", u, resp.StatusCode, resp.Header.Get("Location"))
	}
	return resp.StatusCode
}
