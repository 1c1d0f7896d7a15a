// Package conditions holds the operator's policies: pure functions, one per
// concern, from what the operator observed to a metav1.Condition. Each is
// tested with a table; the reconciler only gathers the observations and
// stores the results.
package conditions

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// Reasons of the conditions. Messages may vary; reasons are the contract.
const (
	ReasonReady      = "Ready"
	ReasonReconciled = "Reconciled"
	ReasonNotStalled = "NotStalled"
	ReasonSuspended  = "Suspended"
	// ReasonSuspendFailed: spec.suspend is set, but the StatefulSet could
	// not be scaled to zero.
	ReasonSuspendFailed     = "SuspendFailed"
	ReasonPodReady          = "PodReady"
	ReasonPodNotReady       = "PodNotReady"
	ReasonConnected         = "Connected"
	ReasonHeartbeatStale    = "HeartbeatStale"
	ReasonDisconnected      = "Disconnected"
	ReasonPairingRequired   = "PairingRequired"
	ReasonLoggedOut         = "LoggedOut"
	ReasonStatusUnreachable = "StatusUnreachable"
	// Stalled reasons: each needs a human to change something.
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonSecretKeyNotFound = "SecretKeyNotFound"
	ReasonSecretConflict    = "SecretConflict"
	// ReasonServiceConflict, ReasonStatefulSetConflict: an object of the
	// bridge's name exists that this MessagingBridge does not control; the
	// operator never takes it over.
	ReasonServiceConflict     = "ServiceConflict"
	ReasonStatefulSetConflict = "StatefulSetConflict"
	// ReasonPodDisruptionBudgetConflict: likewise for the bridge's
	// PodDisruptionBudget.
	ReasonPodDisruptionBudgetConflict = "PodDisruptionBudgetConflict"
	// ReasonApplyRejected: the API server refused an apply for good
	// (validation or admission); retrying the same object cannot help.
	ReasonApplyRejected = "ApplyRejected"
	// ReasonInvalidSecret: a credential has a value the bridge refuses at
	// start-up.
	ReasonInvalidSecret = "InvalidSecret"
	// ReasonEncryptionKeyLost: the encryption key the bridge's data was
	// handed to is missing or was replaced.
	ReasonEncryptionKeyLost = "EncryptionKeyLost"
	// ReasonApplyFailed is a Reconciled=False that retries by itself.
	ReasonApplyFailed = "ApplyFailed"
)

// StaleAfterIntervals is how many heartbeat intervals may pass without a
// heartbeat before a connection the bridge calls live is taken for a ghost.
const StaleAfterIntervals = 3

// SessionObservation is what the operator knows of a bridge's session.
type SessionObservation struct {
	// Suspended: the MessagingBridge runs no pod on purpose.
	Suspended bool
	// PodReady: a bridge pod is ready, so asking it makes sense.
	PodReady bool
	// State is the bridge's answer to GET /api/admin/state, nil when Err.
	State *bridgeclient.State
	// Err is why the state could not be read.
	Err error
}

// SessionConnected is True only when the bridge says it is connected and its
// last heartbeat is younger than StaleAfterIntervals heartbeat intervals. A
// bridge that cannot be asked gives Unknown, never the last known True: a
// ghost connection must not look alive.
func SessionConnected(obs SessionObservation, heartbeatInterval time.Duration, now time.Time) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionSessionConnected}
	switch {
	case obs.Suspended:
		return with(c, metav1.ConditionFalse, ReasonSuspended, "the bridge is suspended")
	case !obs.PodReady:
		return with(c, metav1.ConditionUnknown, ReasonStatusUnreachable, "no bridge pod is ready to report its session")
	case obs.Err != nil:
		return with(c, metav1.ConditionUnknown, ReasonStatusUnreachable, "reading the session state: "+obs.Err.Error())
	case obs.State == nil:
		return with(c, metav1.ConditionUnknown, ReasonStatusUnreachable, "the bridge reported no session state")
	}
	s := obs.State
	if s.Connected && msgbridgev1alpha1.SessionState(s.State) == msgbridgev1alpha1.SessionConnected {
		staleAfter := StaleAfterIntervals * heartbeatInterval
		switch {
		case s.LastHeartbeat == nil:
			return with(c, metav1.ConditionFalse, ReasonHeartbeatStale, "connected, but no heartbeat recorded")
		case now.Sub(*s.LastHeartbeat) >= staleAfter:
			// The heartbeat time is fixed while it is stale, so this
			// message does not change from one poll to the next.
			return with(c, metav1.ConditionFalse, ReasonHeartbeatStale, fmt.Sprintf(
				"connected, but the last heartbeat (%s) is older than %d heartbeat intervals (%s)",
				s.LastHeartbeat.UTC().Format(time.RFC3339), StaleAfterIntervals, staleAfter))
		}
		return with(c, metav1.ConditionTrue, ReasonConnected, "connected as "+s.Account)
	}
	if full, ok := diskFull(c, s); ok {
		return full
	}
	detail := sessionDetail(s)
	switch msgbridgev1alpha1.SessionState(s.State) {
	case msgbridgev1alpha1.SessionUnpaired, msgbridgev1alpha1.SessionPairing:
		return with(c, metav1.ConditionFalse, ReasonPairingRequired, "link a WhatsApp account (QR code or pairing code): "+detail)
	case msgbridgev1alpha1.SessionLoggedOut:
		return with(c, metav1.ConditionFalse, ReasonLoggedOut, "the account was logged out; link it again: "+detail)
	default: // connecting, disconnected, or a state this operator does not know
		return with(c, metav1.ConditionFalse, ReasonDisconnected, detail)
	}
}

func sessionDetail(s *bridgeclient.State) string {
	if s.Reason == "" {
		return "state " + string(s.State)
	}
	return fmt.Sprintf("state %s (%s)", s.State, s.Reason)
}

// Available is True when a bridge pod is ready. Suspended is what the
// StatefulSet shows, not what the spec asks: a suspend that could not scale
// it to zero (scaleErr, or a StatefulSet still asked for replicas) reports
// SuspendFailed, with the pod's readiness as it is.
func Available(sts *appsv1.StatefulSet, suspend bool, scaleErr error) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionAvailable}
	if suspend {
		message, ok := suspension(sts, scaleErr)
		switch {
		case ok:
			return with(c, metav1.ConditionFalse, ReasonSuspended, message)
		case sts != nil && sts.Status.ReadyReplicas > 0:
			return with(c, metav1.ConditionTrue, ReasonSuspendFailed, message)
		}
		return with(c, metav1.ConditionFalse, ReasonSuspendFailed, message)
	}
	switch {
	case sts == nil:
		return with(c, metav1.ConditionFalse, ReasonPodNotReady, "the StatefulSet does not exist yet")
	case sts.Status.ReadyReplicas < 1:
		return with(c, metav1.ConditionFalse, ReasonPodNotReady, "the bridge pod is not ready")
	}
	return with(c, metav1.ConditionTrue, ReasonPodReady, "the bridge pod is ready")
}

// suspension describes a suspended bridge's StatefulSet, and whether it is
// scaled to zero (ok): asked for no replicas, whether or not its last pod
// has stopped yet.
func suspension(sts *appsv1.StatefulSet, scaleErr error) (string, bool) {
	switch {
	case scaleErr != nil:
		return "spec.suspend is set, but the StatefulSet could not be scaled to zero: " + scaleErr.Error(), false
	case sts == nil:
		return "the bridge is suspended (0 replicas); its volume is kept", true
	case sts.Spec.Replicas != nil && *sts.Spec.Replicas > 0:
		return fmt.Sprintf("spec.suspend is set, but the StatefulSet still asks for %d replicas", *sts.Spec.Replicas), false
	case sts.Status.Replicas > 0:
		return fmt.Sprintf("the bridge is suspending: %d pod(s) still stopping; its volume is kept", sts.Status.Replicas), true
	}
	return "the bridge is suspended (0 replicas); its volume is kept", true
}

// Suspended reports whether available shows a bridge scaled to zero.
func Suspended(available metav1.Condition) bool {
	return available.Reason == ReasonSuspended
}

// Blocker is a problem only a human can solve, such as a missing Secret.
type Blocker struct {
	Reason  string
	Message string
}

// Stalled is True with the blocker's reason, False without one. kstatus
// reads Stalled=True as Failed, which stops GitOps tools waiting on the
// resource for good instead of timing out.
func Stalled(b *Blocker) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionStalled}
	if b != nil {
		return with(c, metav1.ConditionTrue, b.Reason, b.Message)
	}
	return with(c, metav1.ConditionFalse, ReasonNotStalled, "reconciling can progress")
}

// Reconciled is True when the owned objects were brought to the current
// generation; otherwise False with the reason of the blocker or the failure.
// A blocker's message stays in Stalled alone: kubectl describe would show it
// in Reconciled and Ready too.
func Reconciled(b *Blocker, applyErr error) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionReconciled}
	switch {
	case b != nil:
		return with(c, metav1.ConditionFalse, b.Reason, "waiting for a person: the Stalled condition says what to do")
	case applyErr != nil:
		return with(c, metav1.ConditionFalse, ReasonApplyFailed, applyErr.Error())
	}
	return with(c, metav1.ConditionTrue, ReasonReconciled, "the StatefulSet, Service and Secrets match the spec")
}

// Ready is True when Reconciled, Available and SessionConnected all are: the
// bridge can send messages now. A bridge waiting to be paired is therefore
// not Ready, and kstatus reads it InProgress: a GitOps sync that waits on it
// waits for the pairing, which is the truth about whether it works.
// Otherwise Ready is False with the reason and message of the first
// condition, in that order, that is not True.
func Ready(reconciled, available, session metav1.Condition) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionReady}
	for _, dep := range []metav1.Condition{reconciled, available, session} {
		if dep.Status != metav1.ConditionTrue {
			return with(c, metav1.ConditionFalse, dep.Reason, dep.Type+": "+dep.Message)
		}
	}
	return with(c, metav1.ConditionTrue, ReasonReady, "the bridge is connected and serving")
}

func with(c metav1.Condition, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	c.Status, c.Reason, c.Message = status, reason, message
	return c
}
