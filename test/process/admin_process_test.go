package process

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The admin surface through the real process: session actions land in the
// week's audit log, analytics count today's sends, the metrics show them,
// a purged log file comes back with the next line, and no credential or
// message body reaches a log file.
func TestAdminSurface(t *testing.T) {
	sim := wasim.Start(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, "LOG_LEVEL=debug")
	sim.Contact(alice, "Alice").SetReceiptMode(wasim.ReceiptsNone)
	base := "http://" + p.addr
	const secretText = "the-body-must-not-be-logged"
	for range 3 {
		if code, raw := sendText(t, p, alice, secretText); code != http.StatusOK {
			t.Fatalf("send: %d %s", code, raw)
		}
	}

	var days []struct {
		Day             string
		Success, Failed int
	}
	if code, body := request(t, http.MethodGet, base+"/api/admin/analytics/delivery?days=2", testAdminToken, "", "", &days); code != http.StatusOK {
		t.Fatalf("analytics: %d %s", code, body)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if len(days) != 2 || days[1].Day != today || days[1].Success != 3 || days[0].Success != 0 {
		t.Errorf("analytics %+v", days)
	}
	for _, bad := range []string{"days=0", "days=367", "days=abc", "days=-1"} {
		if code, _ := request(t, http.MethodGet, base+"/api/admin/analytics/delivery?"+bad, testAdminToken, "", "", nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d", bad, code)
		}
	}

	metricsText := metricsOf(t, base)
	for _, want := range []string{`msgbridge_messages_total{status="sent"} 3`, `msgbridge_session_state{state="connected"} 1`, "msgbridge_send_duration_seconds_count"} {
		if !strings.Contains(metricsText, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	if code, body := request(t, http.MethodPost, base+"/session/logout", testAdminToken, "", "", nil); code != http.StatusOK {
		t.Fatalf("logout: %d %s", code, body)
	}
	var records []struct{ ID, Time, Action, Outcome, Client string }
	if code, body := request(t, http.MethodGet, base+"/api/admin/audit", testAdminToken, "", "", &records); code != http.StatusOK {
		t.Fatalf("audit: %d %s", code, body)
	}
	actions := map[string]string{}
	for _, r := range records {
		actions[r.Action] = r.Outcome + "@" + r.Client
	}
	if actions["session.pairing_qr"] != "success@127.0.0.1" || actions["session.logout"] != "success@127.0.0.1" {
		t.Fatalf("audit records %+v", records)
	}
	// Deleting a record works once; the deletion is itself audited.
	recorded, err := time.Parse(time.RFC3339, records[0].Time)
	if err != nil {
		t.Fatal(err)
	}
	del := base + "/api/admin/audit/" + records[0].ID + "?week=" + audit.WeekOf(recorded).String()
	if code, body := request(t, http.MethodDelete, del, testAdminToken, "", "", nil); code != http.StatusOK {
		t.Errorf("audit delete: %d %s", code, body)
	}
	if code, body := request(t, http.MethodDelete, del, testAdminToken, "", "", nil); code != http.StatusNotFound {
		t.Errorf("second audit delete: %d %s", code, body)
	}

	// Purge today's info log; logging goes on into a new file.
	infoLog := filepath.Join(dataDir, "logs", today+".info.log")
	if _, err := os.Stat(infoLog); err != nil {
		t.Fatalf("no info log: %v", err)
	}
	if code, body := request(t, http.MethodDelete, base+"/api/admin/logs?date="+today+"&level=info", testAdminToken, "", "", nil); code != http.StatusOK {
		t.Fatalf("purge: %d %s", code, body)
	}
	if code, _ := request(t, http.MethodDelete, base+"/api/admin/logs?date="+today+"&level=info", testAdminToken, "", "", nil); code != http.StatusNotFound {
		t.Errorf("second purge: %d", code)
	}
	request(t, http.MethodGet, base+"/session/qr", testAdminToken, "", "", nil) // logs a state change
	waitForFile(t, infoLog)

	// No credential and no message body in any log file.
	entries, _ := os.ReadDir(filepath.Join(dataDir, "logs"))
	if len(entries) < 2 {
		t.Errorf("log files %v", entries)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dataDir, "logs", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{testAPIKey, testAdminToken, testutil.TestKeyHex, secretText} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s contains %q", e.Name(), secret)
			}
		}
	}
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, err := os.Stat(path)
		return err == nil
	}, "%s was not recreated", path)
}

// metricsOf is the bridge's /metrics page.
func metricsOf(t *testing.T, base string) string {
	t.Helper()
	resp, err := apitest.Client(t).Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// waitWebhooksDrained waits until no webhook event waits for delivery: a
// receiver has an event before the bridge records it delivered.
func waitWebhooksDrained(t *testing.T, p *bridgeProcess) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, func() bool {
		return strings.Contains(metricsOf(t, "http://"+p.addr), "\nmsgbridge_webhook_queue_depth 0\n")
	}, "webhook events still wait for delivery")
}
