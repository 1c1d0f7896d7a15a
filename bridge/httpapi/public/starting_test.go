package public

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// waitHeld waits until one request waits for the start.
func waitHeld(t *testing.T, s *Starting) { waitHeldN(t, s, 1) }

// waitHeldN waits until n requests wait for the start.
func waitHeldN(t *testing.T, s *Starting, n int32) {
	t.Helper()
	if !testutil.Wait(5*time.Second, func() bool { return s.waiting.Load() == n }) {
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

	answered := make(chan readAnswer, 1)
	go func() { answered <- getWhole(t, srv.URL+"/api/status") }()
	waitHeld(t, starting)
	router := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, r.URL.Path)
	})
	starting.Ready(router)
	if got := <-answered; got.status != http.StatusTeapot || got.body != "/api/status" {
		t.Fatalf("held request: %d %q, want the router's answer", got.status, got.body)
	}
	// Once ready, /health is the router's too.
	if got := getWhole(t, srv.URL+"/health"); got.status != http.StatusTeapot {
		t.Fatalf("health once ready: %d %s", got.status, got.body)
	}
}

// readAnswer is a response read whole.
type readAnswer struct {
	status int
	body   string
}

// getWhole is GET url; from any goroutine (it reports with t.Error).
func getWhole(t *testing.T, url string) readAnswer {
	resp, err := http.Get(url) //nolint:noctx // the test's own request
	if err != nil {
		t.Error(err)
		return readAnswer{}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return readAnswer{resp.StatusCode, string(body)}
}

// A start that fails answers the requests that waited for it 503
// start_failed, in the error shape.
func TestStartingThatFailsAnswersStartFailed(t *testing.T) {
	starting := NewStarting(time.Now())
	srv := httptest.NewServer(starting)
	t.Cleanup(srv.Close)

	answered := make(chan readAnswer, 1)
	go func() { answered <- getWhole(t, srv.URL+"/api/status") }()
	waitHeld(t, starting)
	starting.Failed()
	starting.Ready(http.NotFoundHandler()) // too late: the start has failed
	got := <-answered
	var body httpkit.ErrorBody
	if err := json.Unmarshal([]byte(got.body), &body); err != nil || got.status != http.StatusServiceUnavailable ||
		body.Error.Code != "start_failed" {
		t.Fatalf("after a failed start: %d %s (%v)", got.status, got.body, err)
	}
}

// The requests held during a start are bounded: one more is refused 503
// still_starting with Retry-After, and the held ones are still served.
func TestStartingHoldsABoundedNumber(t *testing.T) {
	starting := NewStarting(time.Now())
	starting.maxHeld = 2
	srv := httptest.NewServer(starting)
	t.Cleanup(srv.Close)

	answered := make(chan readAnswer, 2)
	for range 2 {
		go func() { answered <- getWhole(t, srv.URL+"/api/status") }()
	}
	waitHeldN(t, starting, 2)
	// Held too, it would never be answered before Ready: the timeout fails it.
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(srv.URL + "/api/status") //nolint:noctx // the test's own request
	if err != nil {
		t.Fatal(err)
	}
	var refused httpkit.ErrorBody
	decodeBody(t, resp, &refused)
	if resp.StatusCode != http.StatusServiceUnavailable || refused.Error.Code != "still_starting" || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("one request beyond the bound: %d %+v Retry-After %q", resp.StatusCode, refused, resp.Header.Get("Retry-After"))
	}
	starting.Ready(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for range 2 {
		if got := <-answered; got.status != http.StatusNoContent {
			t.Errorf("a held request: %d %s", got.status, got.body)
		}
	}
}
