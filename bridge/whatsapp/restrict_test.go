package whatsapp

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.mau.fi/whatsmeow"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// What whatsmeow returns for a refused send, and which are restrictions.
func TestRestrictionCode(t *testing.T) {
	ack := func(code int) error {
		return fmt.Errorf("send: %w", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, code))
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"ack 429", ack(429), bridge.RestrictionRateLimit},
		{"ack 463", ack(463), bridge.RestrictionReachout},
		{"ack 500", ack(500), ""},
		{"ack 4630", ack(4630), ""},
		{"usync 429", fmt.Errorf("failed to get device list: %w", &whatsmeow.IQError{Code: 429, Text: "rate-overlimit"}), bridge.RestrictionRateLimit},
		{"usync 500", fmt.Errorf("failed: %w", whatsmeow.ErrIQInternalServerError), ""},
		{"text only", errors.New("server returned error 463"), ""},
		{"timeout", whatsmeow.ErrMessageTimedOut, ""},
		{"nil", nil, ""},
	} {
		if got := restrictionCode(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		first    time.Duration
		refusals int
		want     time.Duration
	}{
		{time.Minute, 0, time.Minute},
		{time.Minute, 1, 2 * time.Minute},
		{time.Minute, 5, 32 * time.Minute},
		{time.Minute, 6, time.Hour},
		{time.Minute, 1000, time.Hour},
		{time.Hour, 0, time.Hour},
		{100 * time.Millisecond, 3, 800 * time.Millisecond},
	} {
		if got := backoff(tc.first, tc.refusals); got != tc.want {
			t.Errorf("backoff(%s, %d) = %s, want %s", tc.first, tc.refusals, got, tc.want)
		}
	}
}

// Refusals back off until a send goes through; an announced lock's end
// wins over the back-off while it lasts.
func TestRestrictionsRefused(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	r := restrictions{first: time.Second}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if got := r.refused(t0); !got.Equal(t0.Add(want)) {
			t.Errorf("refusal %d pauses until +%s, want +%s", i, got.Sub(t0), want)
		}
	}
	r.sent()
	if got := r.refused(t0); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("after a send: +%s, want +1s", got.Sub(t0))
	}
	lock := t0.Add(3 * time.Hour)
	r.announced(true, lock)
	if got := r.refused(t0); !got.Equal(lock) {
		t.Errorf("during an announced lock: %s, want its end %s", got, lock)
	}
	r.announced(false, time.Time{})
	if got := r.refused(t0); got.Equal(lock) {
		t.Error("a lifted lock still decides")
	}
}

func TestParseReachoutFrame(t *testing.T) {
	frame := func(update string) string {
		return `<notification from="s.whatsapp.net" id="1" t="1788400000" type="mex"><update op_name="NotificationUserReachoutTimelockUpdate">` +
			update + `</update></notification>`
	}
	for _, tc := range []struct {
		name          string
		frame         string
		active, known bool
		until         int64
	}{
		{"active, end as string", frame(`{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":true,"time_enforcement_ends":"1788414761","enforcement_type":"DEFAULT"}}}`), true, true, 1788414761},
		{"active, end as number", frame(`{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":true,"time_enforcement_ends":1788414761}}}`), true, true, 1788414761},
		{"lifted", frame(`{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":false}}}`), false, true, 0},
		{"active without an end", frame(`{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":true}}}`), false, false, 0},
		{"end not a number", frame(`{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":true,"time_enforcement_ends":"soon"}}}`), false, false, 0},
		{"another update", frame(`{"data":{"xwa2_notify_newsletter_on_join":{"id":"1"}}}`), false, false, 0},
		{"not JSON", frame(`xwa2_notify_account_reachout_timelock`), false, false, 0},
		{"a message mentioning it", `<message from="x"><body>{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":true,"time_enforcement_ends":"1"}}}</body></message>`, false, false, 0},
	} {
		active, until, known := parseReachoutFrame(tc.frame)
		if active != tc.active || known != tc.known || (tc.until != 0 && until.Unix() != tc.until) {
			t.Errorf("%s: active %v until %s known %v", tc.name, active, until, known)
		}
	}
}

// The frame tap reads only the receive log, and passes every line on.
func TestFrameTap(t *testing.T) {
	var seen []string
	base := tapFrames(newWALogger(logr.Discard()), func(f string) { seen = append(seen, f) })
	note := `<notification type="mex"><update>{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":false}}}</update></notification>`
	base.Sub("client").Sub("Send").Debugf("%s", note)
	base.Sub("client").Sub("Recv").Debugf("%s", "<ack/>")
	base.Sub("client").Sub("Recv").Debugf("%s", note)
	if len(seen) != 1 || seen[0] != note {
		t.Errorf("tapped %q", seen)
	}
}

func TestRestrictingTransition(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	until := t0.Add(time.Hour)
	connected := status{State: connectedSt, Account: "4915112345678"}
	restrictedSt := status{State: connectedSt, Account: "4915112345678", Reason: contract.ReasonRestricted, RestrictedUntil: until}
	down := status{State: disconnectSt, Reason: contract.ReasonNetwork}
	for _, tc := range []struct {
		name string
		from status
		ev   event
		at   time.Time
		want status
	}{
		{"restricted while connected", connected, restricted{until}, t0, restrictedSt},
		{"ends on time", restrictedSt, restrictionEnded{until}, until, connected},
		{"extended meanwhile: the old end passes", status{State: connectedSt, Account: "4915112345678", Reason: contract.ReasonRestricted, RestrictedUntil: until.Add(time.Hour)}, restrictionEnded{until}, until,
			status{State: connectedSt, Account: "4915112345678", Reason: contract.ReasonRestricted, RestrictedUntil: until.Add(time.Hour)}},
		{"lifted by WhatsApp", restrictedSt, restricted{}, t0, connected},
		{"while down: only the end is kept", down, restricted{until}, t0, status{State: disconnectSt, Reason: contract.ReasonNetwork, RestrictedUntil: until}},
		{"reconnect inside the restriction", status{State: connecting, RestrictedUntil: until}, loggedIn{account: "4915112345678"}, t0,
			status{State: connectedSt, Account: "4915112345678", Reason: contract.ReasonRestricted, RestrictedUntil: until, ConnectedSince: t0, LastHeartbeat: t0}},
		{"reconnect after it", status{State: connecting, RestrictedUntil: until}, loggedIn{account: "4915112345678"}, until,
			status{State: connectedSt, Account: "4915112345678", RestrictedUntil: until, ConnectedSince: until, LastHeartbeat: until}},
	} {
		got, _ := transition(tc.from, tc.ev, tc.at)
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// WhatsApp's notification is untrusted input: the parser never panics, and
// an active lock it accepts has a positive end.
func FuzzParseReachoutFrame(f *testing.F) {
	for _, s := range []string{
		`<notification type="mex"><update>{"data":{"xwa2_notify_account_reachout_timelock":{"is_active":true,"time_enforcement_ends":"1788414761"}}}</update></notification>`,
		`<notification>{"data":{"xwa2_notify_account_reachout_timelock":null}}</notification>`,
		`<notification>xwa2_notify_account_reachout_timelock}{`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		active, until, known := parseReachoutFrame(frame)
		if active && (!known || until.Unix() <= 0) {
			t.Fatalf("%q: active %v until %s known %v", frame, active, until, known)
		}
	})
}
