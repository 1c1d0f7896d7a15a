package conditions

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// Session mirrors a bridge's state answer into the status, without a probe
// time (StatusToWrite sets it).
func Session(s *bridgeclient.State) *msgbridgev1alpha1.SessionStatus {
	out := &msgbridgev1alpha1.SessionStatus{
		State:   msgbridgev1alpha1.SessionState(s.State),
		Account: s.Account,
		Reason:  string(s.Reason),
	}
	if s.LastHeartbeat != nil {
		// The API server stores seconds; truncating here keeps a
		// comparison with the stored value exact.
		t := metav1.NewTime(s.LastHeartbeat.Truncate(time.Second))
		out.LastHeartbeatTime = &t
	}
	if s.RestrictedUntil != nil {
		t := metav1.NewTime(s.RestrictedUntil.Truncate(time.Second))
		out.RestrictedUntil = &t
	}
	return out
}

// Workload describes what runs the bridge: sts (nil before it exists), the
// state the bridge answered (nil when it could not be asked) and the last
// status. The image is the template's once every replica runs its revision;
// the version is the bridge's own word, kept from the last answer.
func Workload(sts *appsv1.StatefulSet, state *bridgeclient.State, last *msgbridgev1alpha1.WorkloadStatus, claim string) *msgbridgev1alpha1.WorkloadStatus {
	out := last.DeepCopy()
	if out == nil {
		out = &msgbridgev1alpha1.WorkloadStatus{}
	}
	if state != nil && state.Version != "" {
		out.Version = state.Version
	}
	if sts == nil {
		return out
	}
	out.Claim, out.Pod = claim, ""
	if sts.Status.Replicas > 0 {
		out.Pod = sts.Name + "-0"
	}
	rolledOut := sts.Status.ObservedGeneration >= sts.Generation && sts.Status.UpdateRevision == sts.Status.CurrentRevision
	if containers := sts.Spec.Template.Spec.Containers; rolledOut && len(containers) > 0 {
		out.Image = containers[0].Image
	}
	return out
}

// UnobservedSession is the session status when the bridge could not be
// asked: the state is suspended or unknown, never the last reading's, so
// that a suspended or unreachable bridge does not look connected; the
// account, heartbeat and probe time stay those of the last reading.
func UnobservedSession(last *msgbridgev1alpha1.SessionStatus, suspended bool) *msgbridgev1alpha1.SessionStatus {
	out := last.DeepCopy()
	if out == nil {
		out = &msgbridgev1alpha1.SessionStatus{}
	}
	out.State, out.Reason = msgbridgev1alpha1.SessionUnknown, ""
	if suspended {
		out.State = msgbridgev1alpha1.SessionSuspended
	}
	return out
}

// StatusToWrite decides whether the status computed this round is worth an
// API write, and returns what to write. The operator polls each bridge every
// 30 s; writing every poll would cost a write per bridge per poll although
// nothing a reader acts on changed. So:
//
//   - next.Session is this round's reading, or, when the bridge could not be
//     read, an UnobservedSession, which keeps the last probe time (nil
//     keeps the last status whole);
//   - a heartbeat that only moved forward is not a change by itself, unless
//     refresh > 0 and it moved by at least refresh since the stored one,
//     which bounds how stale the Heartbeat column of kubectl looks;
//   - lastProbeTime moves only when the status is written: it is the time of
//     the reading the status shows.
func StatusToWrite(old, next msgbridgev1alpha1.MessagingBridgeStatus, probedAt time.Time, refresh time.Duration) (msgbridgev1alpha1.MessagingBridgeStatus, bool) {
	read := next.Session != nil && next.Session.State.Observed()
	switch {
	case next.Session == nil:
		next.Session = old.Session.DeepCopy()
	case read:
		probe := metav1.NewTime(probedAt.Truncate(time.Second))
		next.Session.LastProbeTime = &probe
	}
	if !equality.Semantic.DeepEqual(withoutPollNoise(old), withoutPollNoise(next)) {
		return next, true
	}
	if read && heartbeatRefreshDue(old.Session, next.Session, refresh) {
		return next, true
	}
	return old, false
}

// withoutPollNoise drops what changes on every poll of a healthy bridge, and
// keeps whether a heartbeat is known at all, which is a real change.
func withoutPollNoise(s msgbridgev1alpha1.MessagingBridgeStatus) msgbridgev1alpha1.MessagingBridgeStatus {
	s = *s.DeepCopy()
	if s.Session != nil {
		s.Session.LastProbeTime = nil
		if s.Session.LastHeartbeatTime != nil {
			s.Session.LastHeartbeatTime = &metav1.Time{}
		}
	}
	return s
}

func heartbeatRefreshDue(old, next *msgbridgev1alpha1.SessionStatus, refresh time.Duration) bool {
	if refresh <= 0 || old == nil || old.LastHeartbeatTime == nil || next.LastHeartbeatTime == nil {
		return false
	}
	return next.LastHeartbeatTime.Sub(old.LastHeartbeatTime.Time) >= refresh
}
