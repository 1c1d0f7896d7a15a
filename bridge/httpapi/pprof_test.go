package httpapi

import (
	"io"
	"net/http"
	"runtime/pprof"
	"strings"
	"testing"
)

// Go's profiles are there only with PPROF=on, and then only for the admin
// token: off, every profile path is an unknown one (404) even with it.
func TestPprofIsOffByDefaultAndBehindTheAdminToken(t *testing.T) {
	off := newTestServer(t, testDeps{})
	on := newTestServer(t, testDeps{Pprof: true})
	for _, c := range []struct {
		name       string
		url        string
		headers    []string
		wantStatus int
		wantCode   string
	}{
		{"off, with the token: heap", off.URL + "/debug/pprof/heap", []string{adminHeader}, http.StatusNotFound, "not_found"},
		{"on, no token: heap", on.URL + "/debug/pprof/heap", nil, http.StatusUnauthorized, "unauthorized"},
		{"on, wrong token", on.URL + "/debug/pprof/goroutine", []string{"X-Admin-Token: wrong-token-0123456789"}, http.StatusUnauthorized, "unauthorized"},
		{"on, debug not 0-2", on.URL + "/debug/pprof/heap?debug=7", []string{adminHeader}, http.StatusBadRequest, "invalid_debug"},
		{"on, unknown profile", on.URL + "/debug/pprof/nothing", []string{adminHeader}, http.StatusNotFound, "not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := call(t, http.MethodGet, c.url, nil, c.headers...)
			if status != c.wantStatus || errorCode(t, body) != c.wantCode {
				t.Errorf("%d %s, want %d %s", status, body, c.wantStatus, c.wantCode)
			}
		})
	}
}

func TestPprofServesProfilesWithTheAdminToken(t *testing.T) {
	on := newTestServer(t, testDeps{Pprof: true})
	if status, body := call(t, http.MethodGet, on.URL+"/debug/pprof/goroutine?debug=1", nil, adminHeader); status != http.StatusOK ||
		!strings.Contains(body, "goroutine profile:") {
		t.Errorf("goroutines as text: %d %.200s", status, body)
	}
	// The CPU profile: a bad length is refused, and so is a second one
	// while one records (here, the test's own).
	if status, body := call(t, http.MethodGet, on.URL+"/debug/pprof/profile?seconds=0", nil, adminHeader); status != http.StatusBadRequest ||
		errorCode(t, body) != "invalid_seconds" {
		t.Errorf("seconds=0: %d %s", status, body)
	}
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatal(err)
	}
	status, body := call(t, http.MethodGet, on.URL+"/debug/pprof/profile?seconds=1", nil, adminHeader)
	pprof.StopCPUProfile()
	if status != http.StatusConflict || errorCode(t, body) != "profile_running" {
		t.Errorf("while another CPU profile records: %d %s", status, body)
	}
	if status, body := call(t, http.MethodGet, on.URL+"/debug/pprof/profile?seconds=1", nil, adminHeader); status != http.StatusOK || body == "" {
		t.Errorf("CPU profile: %d, %d bytes", status, len(body))
	}
	resp := do(t, http.MethodGet, on.URL+"/debug/pprof/heap", nil, adminHeader)
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("heap: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
