package whatsapp

import (
	"errors"
	"fmt"
	"testing"
	"time"

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
