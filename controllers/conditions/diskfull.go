package conditions

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// ReasonDiskFull is SessionConnected=False while the bridge keeps its link
// down because its volume's free space is below DISK_RESERVE: it neither
// receives nor accepts sends (507) until space is freed, then resumes by
// itself. Its own reason, so that the event on the resource says what to do.
const ReasonDiskFull = "DiskFull"

// ReasonClientOutdated is SessionConnected=False while WhatsApp refuses the
// bridge's client version, even after the bridge refreshed it. The bridge
// resumes by itself once a version it learns later (daily) is accepted; a
// newer bridge image ends it at once. Stalled: no GitOps wait should sit
// through it.
const ReasonClientOutdated = "ClientOutdated"

// needsPerson are the session states that only a person ends: SessionConnected
// reads them with their own reason, and Stalled says so (see SessionStall).
var needsPerson = map[contract.Reason]struct {
	reason, message string
}{
	contract.ReasonDiskFull: {ReasonDiskFull,
		"the bridge's volume is below its free-space reserve (DISK_RESERVE): it does not receive and refuses sends until space is freed or the volume grows"},
	contract.ReasonClientOutdated: {ReasonClientOutdated,
		"WhatsApp refuses the bridge's client version, even after a refresh: it neither sends nor receives; it retries with each version it learns from WhatsApp Web (daily) and reconnects by itself once one is accepted, and a newer bridge image (upgrade the operator, or spec.image) ends it now"},
}

// diskFull is SessionConnected for a bridge that reports a state only a
// person ends (disk_full, client_outdated); ok is false for any other state.
func diskFull(c metav1.Condition, s *bridgeclient.State) (metav1.Condition, bool) {
	p, ok := needsPerson[s.Reason]
	if !ok {
		return c, false
	}
	return with(c, metav1.ConditionFalse, p.reason, p.message), true
}

// SessionStall is the blocker a session condition stands for when only a
// person can end it (a full volume, a client version WhatsApp refuses), nil
// otherwise. Stalled=True is what kstatus reads as Failed and the chart's Argo
// CD health check as Degraded: waiting would never end by itself.
func SessionStall(session metav1.Condition) *Blocker {
	if session.Status != metav1.ConditionFalse {
		return nil
	}
	for _, p := range needsPerson {
		if p.reason == session.Reason {
			return &Blocker{Reason: session.Reason, Message: session.Message}
		}
	}
	return nil
}
