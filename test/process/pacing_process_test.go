package process

import (
	"net/http"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// sendQueueState is the send_queue of /health and the admin state.
type sendQueueState struct {
	Depth      int        `json:"depth"`
	Rate       string     `json:"rate"`
	NextSendAt *time.Time `json:"next_send_at"`
}

// Pacing is visible: at SEND_RATE=1/m the first text goes at once; the
// next ones are answered 202 with their place in the queue and when they
// are expected to go, about a mean paced gap apart; /health and the admin
// state show how many wait, the pace and the next send.
func TestPacingIsVisible(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir(), "SEND_RATE=1/m")
	sim.Contact(alice, "Alice")
	if code, raw := sendText(t, p, alice, "first"); code != http.StatusOK {
		t.Fatalf("first: %d %s", code, raw)
	}
	var waiting []sentItem
	for i, text := range []string{"second", "third"} {
		code, raw := sendText(t, p, alice, text)
		m := decode[sendResponse](t, raw).Messages[0]
		if code != http.StatusAccepted || m.Status != "Queued" || m.QueuePosition != i+1 || m.ScheduledAt.IsZero() {
			t.Fatalf("%s: %d %s", text, code, raw)
		}
		waiting = append(waiting, m)
	}
	// A minute at least after the first; the third a mean gap (75 s) after.
	if until := time.Until(waiting[0].ScheduledAt); until < 50*time.Second || until > 95*time.Second {
		t.Errorf("the second is expected in %s, want about a minute", until)
	}
	if gap := waiting[1].ScheduledAt.Sub(waiting[0].ScheduledAt); gap != 75*time.Second {
		t.Errorf("the third is expected %s after the second, want the mean gap 75s", gap)
	}
	var health struct {
		SendQueue *sendQueueState `json:"send_queue"`
	}
	if code, raw := request(t, http.MethodGet, "http://"+p.addr+"/health", "", "", "", &health); code != http.StatusOK ||
		health.SendQueue == nil || health.SendQueue.Depth != 2 || health.SendQueue.Rate != "1/m" ||
		health.SendQueue.NextSendAt == nil || !health.SendQueue.NextSendAt.Equal(waiting[0].ScheduledAt) {
		t.Errorf("health: %d %s; want 2 waiting at 1/m, next at %s", code, raw, waiting[0].ScheduledAt)
	}
	var state struct {
		SendQueue *sendQueueState `json:"send_queue"`
	}
	if code, raw := request(t, http.MethodGet, "http://"+p.addr+"/api/admin/state", testAdminToken, "", "", &state); code != http.StatusOK ||
		state.SendQueue == nil || state.SendQueue.Depth != 2 || state.SendQueue.Rate != "1/m" || state.SendQueue.NextSendAt == nil {
		t.Errorf("admin state: %d %s", code, raw)
	}
}
