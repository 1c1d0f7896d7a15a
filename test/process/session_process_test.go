package process

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const (
	testAdminToken = "admin-token-0123456789abcdef"
	testAccount    = "4915100000001"
)

// simEnv is the environment of a simulator-wired bridge on dataDir.
func simEnv(sim *wasim.Simulator, dataDir string) []string {
	return append(validEnv(dataDir),
		"HEARTBEAT_INTERVAL=1s",
		// Tests send bursts; the default 20/m would make them wait. Tests of
		// pacing set their own rate after this one.
		"SEND_RATE=100000/s",
		// Restarts connect at once: the jitter is for fleets, and
		// bridge/whatsapp tests it.
		"CONNECT_JITTER=0s",
		"WASIM_ADDR="+sim.Addr(),
		"WASIM_ROOT_KEY="+sim.RootPublicKeyHex())
}

type adminState struct {
	State, Account, Reason, Version string
	Connected                       bool
	LastHeartbeat                   *time.Time `json:"last_heartbeat"`
	ConnectedSince                  *time.Time `json:"connected_since"`
	RestrictedUntil                 *time.Time `json:"restricted_until"`
}

func waitAdminState(t testing.TB, p *bridgeProcess, what string, ok func(adminState) bool) adminState {
	t.Helper()
	return testutil.Poll(t, 30*time.Second, func() (adminState, bool) {
		var s adminState
		request(t, http.MethodGet, "http://"+p.addr+"/api/admin/state", testAdminToken, "", "", &s)
		return s, ok(s)
	}, "waiting for %s; stderr %s", what, p.stderr)
}

func connected(s adminState) bool { return s.Connected && s.State == "connected" }

// The bridge process links by a QR code fetched over HTTP, and after kill -9
// a new process on the same DATA_DIR reconnects without pairing.
func TestProcessLinksAndReconnectsAfterKill9(t *testing.T) {
	sim := wasim.Start(t)
	dataDir := t.TempDir()
	p := startBridge(t, simBridgeBin, simEnv(sim, dataDir))
	base := "http://" + p.addr

	wasimtest.LinkBridge(t, sim.Phone(testAccount), base, testAdminToken)
	s := waitAdminState(t, p, "connected", connected)
	if s.Account != testAccount || s.LastHeartbeat == nil || s.ConnectedSince == nil || s.Version != "9.9.9-test" {
		t.Errorf("state %+v", s)
	}
	var status struct{ Connected bool }
	if request(t, http.MethodGet, base+"/session/status", "", "", "", &status); !status.Connected {
		t.Error("/session/status does not say connected")
	}

	p.kill()
	p2 := startBridge(t, simBridgeBin, simEnv(sim, dataDir))
	s2 := waitAdminState(t, p2, "reconnected", connected)
	if s2.Account != testAccount || !s2.ConnectedSince.After(*s.ConnectedSince) {
		t.Errorf("after restart %+v, before %+v", s2, s)
	}
	if devices := sim.Phone(testAccount).Devices(); len(devices) != 1 {
		t.Errorf("the phone lists %d linked devices, want the one from before the crash", len(devices))
	}
}

func TestSecondProcessOnSameDataDirIsRefused(t *testing.T) {
	sim := wasim.Start(t)
	dataDir := t.TempDir()
	first := startBridge(t, simBridgeBin, simEnv(sim, dataDir))

	second := runToExit(t, simBridgeBin, simEnv(sim, dataDir))
	if second.code != exitRunFailed || !strings.Contains(second.stderr, "another bridge process is using this DATA_DIR") {
		t.Fatalf("second process: exit %d, stderr %q", second.code, second.stderr)
	}
	// The first one is unaffected.
	if code, _ := request(t, http.MethodGet, "http://"+first.addr+"/health", "", "", "", nil); code != http.StatusOK {
		t.Errorf("first process after the refusal: %d", code)
	}
}

func TestSessionEndpointsStatusCodes(t *testing.T) {
	sim := wasim.Start(t)
	p := startBridge(t, simBridgeBin, simEnv(sim, t.TempDir()))
	base := "http://" + p.addr
	jsonType := "application/json"

	// One 401 body, whether the token is missing or wrong.
	_, missing := request(t, http.MethodGet, base+"/session/qr", "", "", "", nil)
	code, wrong := request(t, http.MethodGet, base+"/session/qr", "wrong-token-0123456789", "", "", nil)
	if code != http.StatusUnauthorized || missing != wrong || !strings.Contains(wrong, `"code":"unauthorized"`) {
		t.Errorf("401s differ or are wrong: %d %q vs %q", code, missing, wrong)
	}
	for _, c := range []struct {
		method, path, contentType, body string
		want                            int
		code                            string
	}{
		{http.MethodGet, "/session/groups", "", "", http.StatusServiceUnavailable, "not_linked"},
		{http.MethodPost, "/session/pairing-code", jsonType, `{"number":"12ab"}`, http.StatusBadRequest, "invalid_number"},
		{http.MethodPost, "/session/pairing-code", jsonType, `{"number":"4915100000001","x":1}`, http.StatusBadRequest, "invalid_json"},
		{http.MethodPost, "/session/pairing-code", "text/plain", `{"number":"4915100000001"}`, http.StatusUnsupportedMediaType, "unsupported_media_type"},
	} {
		var e struct {
			Error struct{ Code, Message string }
		}
		if got, body := request(t, c.method, base+c.path, testAdminToken, c.contentType, c.body, &e); got != c.want || e.Error.Code != c.code || e.Error.Message == "" {
			t.Errorf("%s %s %s: %d %s; want %d %s", c.method, c.path, c.body, got, body, c.want, c.code)
		}
	}
	for _, c := range []struct {
		method, path string
		want         int
		code         string
	}{
		{http.MethodDelete, "/session/qr", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodGet, "/api/admin/nothing", http.StatusNotFound, "not_found"},
	} {
		var e struct {
			Error struct{ Code, Message string }
		}
		if got, body := requestOffDocument(t, c.method, base+c.path, testAdminToken, &e); got != c.want || e.Error.Code != c.code {
			t.Errorf("%s %s: %d %s; want %d %s", c.method, c.path, got, body, c.want, c.code)
		}
	}

	// Link by pairing code over HTTP, then linking again conflicts.
	var pc struct{ Code string }
	if code, body := request(t, http.MethodPost, base+"/session/pairing-code", testAdminToken, jsonType, `{"number":"+49 151 0000 0001"}`, &pc); code != http.StatusOK || len(pc.Code) != 8 {
		t.Fatalf("pairing code: %d %s", code, body)
	}
	if _, err := sim.Phone(testAccount).EnterCode(context.Background(), pc.Code); err != nil {
		t.Fatal(err)
	}
	waitAdminState(t, p, "connected", connected)
	for _, path := range []string{"/session/qr", "/session/pairing-code"} {
		method, body := http.MethodGet, ""
		if path == "/session/pairing-code" {
			method, body = http.MethodPost, `{"number":"4915100000001"}`
		}
		if got, raw := request(t, method, base+path, testAdminToken, jsonType, body, nil); got != http.StatusConflict {
			t.Errorf("%s while linked: %d %s", path, got, raw)
		}
	}
	sim.CreateGroup("Sales", sim.Phone(testAccount), sim.Contact("4915100000002", "Alice"))
	var groups []struct {
		ID, Subject  string
		Participants int
	}
	if code, body := request(t, http.MethodGet, base+"/session/groups", testAdminToken, "", "", &groups); code != http.StatusOK || len(groups) != 1 || groups[0].Subject != "Sales" || groups[0].Participants != 2 {
		t.Errorf("groups: %d %s", code, body)
	}

	var out struct{ Status, Message string }
	if code, body := request(t, http.MethodPost, base+"/session/logout", testAdminToken, "", "", &out); code != http.StatusOK || out.Status != "success" {
		t.Fatalf("logout: %d %s", code, body)
	}
	waitAdminState(t, p, "unpaired", func(s adminState) bool { return s.State == "unpaired" && s.Account == "" })
}

type exitResult struct {
	code   int
	stderr string
}

// runToExit runs bin to completion (at most 30 s).
func runToExit(t *testing.T, bin string, env []string) exitResult {
	t.Helper()
	skipProcessTest(t)
	stderr := &testutil.LockedBuffer{}
	cmd := newCmd(bin, env, stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done: // a non-zero exit is what the caller inspects
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the process did not exit")
	}
	return exitResult{code: cmd.ProcessState.ExitCode(), stderr: stderr.String()}
}
