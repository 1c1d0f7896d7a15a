package conditions

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

func TestUnobservedSession(t *testing.T) {
	hb := metav1.NewTime(now.Add(-time.Minute))
	probe := metav1.NewTime(now.Add(-30 * time.Second))
	last := &msgbridgev1alpha1.SessionStatus{State: msgbridgev1alpha1.SessionConnected, Account: "4917012345678",
		LastHeartbeatTime: &hb, LastProbeTime: &probe, Reason: "x"}
	cases := []struct {
		name      string
		last      *msgbridgev1alpha1.SessionStatus
		suspended bool
		want      msgbridgev1alpha1.SessionState
	}{
		{"unreachable after a reading", last, false, msgbridgev1alpha1.SessionUnknown},
		{"suspended after a reading", last, true, msgbridgev1alpha1.SessionSuspended},
		{"never read", nil, false, msgbridgev1alpha1.SessionUnknown},
	}
	for _, tc := range cases {
		got := UnobservedSession(tc.last, tc.suspended)
		if got.State != tc.want || got.Reason != "" {
			t.Errorf("%s: state %q reason %q, want %q and none", tc.name, got.State, got.Reason, tc.want)
		}
		if tc.last != nil && (got.Account != last.Account || !got.LastHeartbeatTime.Equal(&hb) || !got.LastProbeTime.Equal(&probe)) {
			t.Errorf("%s: lost the last reading: %+v", tc.name, got)
		}
	}
	if last.State != msgbridgev1alpha1.SessionConnected {
		t.Error("UnobservedSession changed its argument")
	}
}

// An unobserved session is written once when the state changes, keeps the
// last probe time, and is not rewritten poll after poll.
func TestStatusToWriteUnobserved(t *testing.T) {
	probe := metav1.NewTime(now.Add(-time.Minute))
	old := msgbridgev1alpha1.MessagingBridgeStatus{Session: &msgbridgev1alpha1.SessionStatus{
		State: msgbridgev1alpha1.SessionConnected, Account: "4917012345678", LastProbeTime: &probe}}
	next := old
	next.Session = UnobservedSession(old.Session, false)
	written, changed := StatusToWrite(old, next, now, time.Minute)
	if !changed || written.Session.State != msgbridgev1alpha1.SessionUnknown || !written.Session.LastProbeTime.Equal(&probe) {
		t.Fatalf("changed %v, session %+v: want unknown with the old probe time", changed, written.Session)
	}
	again := written
	again.Session = UnobservedSession(written.Session, false)
	if _, changed := StatusToWrite(written, again, now.Add(time.Hour), time.Minute); changed {
		t.Error("an unchanged unobserved session was written again")
	}
}
