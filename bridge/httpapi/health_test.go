package httpapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/fakes"
)

// getJSON decodes the body of GET url into into and returns the status and
// the headers.
func getJSON(t *testing.T, url string, into any) (int, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: body is not JSON: %v", url, err)
	}
	return resp.StatusCode, resp.Header
}

var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func TestHealth(t *testing.T) {
	started := time.Date(2026, 11, 21, 9, 59, 0, 0, time.UTC)
	now := time.Date(2026, 11, 21, 11, 0, 0, 123_456_789, time.FixedZone("CET", 3600))
	srv := newTestServer(t, testDeps{
		Started: started,
		Now:     func() time.Time { return now },
		Session: &fakes.Session{Link: bridge.SessionStatus{State: contract.StateDisconnected}},
	})
	var got map[string]any
	status, header := getJSON(t, srv.URL+"/health", &got)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if ct := header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	want := map[string]any{
		"status":    "online",
		"whatsapp":  "disconnected",
		"uptime":    float64(60),
		"version":   contract.BuildVersion(),
		"timestamp": "2026-11-21T10:00:00.123Z",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("unexpected fields: %v", got)
	}
	if v, _ := got["version"].(string); !semver.MatchString(v) {
		t.Errorf("version %q is not semantic", v)
	}
	// Whole seconds on the wire, not 60.123.
	if _, raw := call(t, http.MethodGet, srv.URL+"/health", nil); !strings.Contains(raw, `"uptime":60,`) {
		t.Errorf("uptime is not an integer: %s", raw)
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	srv := newTestServer(t, testDeps{Started: time.Now()})
	var body ErrorBody
	if status, _ := getJSON(t, srv.URL+"/nope", &body); status != http.StatusNotFound || body.Error.Code != "not_found" {
		t.Errorf("unknown route: %d %+v", status, body)
	}
	resp, err := http.Post(srv.URL+"/health", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body = ErrorBody{}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMethodNotAllowed || body.Error.Code != "method_not_allowed" || body.Error.Message == "" {
		t.Errorf("wrong method: %d %+v", resp.StatusCode, body)
	}
}

// While the bridge holds the link down for a full disk, /health says so
// instead of a bare "disconnected".
func TestHealthSaysDiskFull(t *testing.T) {
	srv := newTestServer(t, testDeps{Session: &fakes.Session{Link: bridge.SessionStatus{
		State: contract.StateDisconnected, Reason: contract.ReasonDiskFull,
	}}})
	var got map[string]any
	if status, _ := getJSON(t, srv.URL+"/health", &got); status != http.StatusOK || got["whatsapp"] != "disk_full" {
		t.Errorf("health %d %v", status, got)
	}
}

// While WhatsApp refuses the client's version, /health says so.
func TestHealthSaysClientOutdated(t *testing.T) {
	srv := newTestServer(t, testDeps{Session: &fakes.Session{Link: bridge.SessionStatus{
		State: contract.StateDisconnected, Reason: contract.ReasonClientOutdated,
	}}})
	var got map[string]any
	if status, _ := getJSON(t, srv.URL+"/health", &got); status != http.StatusOK || got["whatsapp"] != "client_outdated" {
		t.Errorf("health %d %v", status, got)
	}
}
