package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// waitHeld waits until one request waits for the start.
func waitHeld(t *testing.T, s *Starting) {
	t.Helper()
	if !testutil.Wait(5*time.Second, func() bool { return s.waiting.Load() == 1 }) {
		t.Fatal("the request never reached the start's wait")
	}
}

func decodeBody(t *testing.T, resp *http.Response, into any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("%s: body is not JSON: %v", resp.Request.URL, err)
	}
}

// A probe's /health is answered while the bridge starts; a request that
// needs the stores waits for them and is then served by the bridge's router,
// not refused.
func TestStartingAnswersHealthAndHoldsTheRest(t *testing.T) {
	starting := NewStarting(time.Now().Add(-2 * time.Second))
	srv := httptest.NewServer(starting)
	t.Cleanup(srv.Close)
	client := apitest.Client(t)

	var health map[string]any
	resp, err := client.Get(srv.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	decodeBody(t, resp, &health)
	if resp.StatusCode != http.StatusOK || health["whatsapp"] != LinkStarting || health["uptime"].(float64) < 2 {
		t.Fatalf("health while starting: %d %v", resp.StatusCode, health)
	}

	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/api/status") //nolint:noctx // the test's own request
		if err != nil {
			t.Error(err)
		}
		answered <- resp
	}()
	waitHeld(t, starting)
	router := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, r.URL.Path)
	})
	starting.Ready(router)
	resp = <-answered
	if resp == nil {
		t.FailNow()
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || string(body) != "/api/status" {
		t.Fatalf("held request: %d %q, want the router's answer", resp.StatusCode, body)
	}
	// Once ready, /health is the router's too.
	if resp, err := http.Get(srv.URL + "/health"); err != nil || resp.StatusCode != http.StatusTeapot { //nolint:noctx // the test's own request
		t.Fatalf("health once ready: %v %v", resp, err)
	}
}

// A start that fails answers the requests that waited for it 503
// start_failed, in the error shape.
func TestStartingThatFailsAnswersStartFailed(t *testing.T) {
	starting := NewStarting(time.Now())
	srv := httptest.NewServer(starting)
	t.Cleanup(srv.Close)

	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/api/status") //nolint:noctx // the test's own request
		if err != nil {
			t.Error(err)
		}
		answered <- resp
	}()
	waitHeld(t, starting)
	starting.Failed()
	starting.Ready(http.NotFoundHandler()) // too late: the start has failed
	resp := <-answered
	if resp == nil {
		t.FailNow()
	}
	var got ErrorBody
	decodeBody(t, resp, &got)
	if resp.StatusCode != http.StatusServiceUnavailable || got.Error.Code != "start_failed" {
		t.Fatalf("after a failed start: %d %+v", resp.StatusCode, got)
	}
}
