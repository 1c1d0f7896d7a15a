package conditions

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// Reasons of SendingRestricted.
const (
	ReasonRestricted    = "Restricted"
	ReasonNotRestricted = "NotRestricted"
)

// SendingRestricted is True while the bridge reports that WhatsApp
// restricts its sending, with the end in the message; False when it
// reports none (or is suspended); Unknown when it cannot be asked. It
// leaves Ready alone: a restricted bridge is up, receives, and keeps its
// queue for when the restriction ends.
func SendingRestricted(obs SessionObservation, now time.Time) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionSendingRestricted}
	switch {
	case obs.Suspended:
		return with(c, metav1.ConditionFalse, ReasonSuspended, "the bridge is suspended")
	case !obs.PodReady, obs.Err != nil, obs.State == nil:
		return with(c, metav1.ConditionUnknown, ReasonStatusUnreachable, "the bridge's session state cannot be read")
	}
	until := obs.State.RestrictedUntil
	if until == nil || !until.After(now) {
		return with(c, metav1.ConditionFalse, ReasonNotRestricted, "WhatsApp does not restrict sending")
	}
	return with(c, metav1.ConditionTrue, ReasonRestricted,
		"WhatsApp restricts sending until "+until.UTC().Format(time.RFC3339)+"; the bridge holds its queue until then")
}
