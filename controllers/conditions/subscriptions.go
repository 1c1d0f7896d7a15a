package conditions

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

// Reasons of SubscriptionsHealthy.
const (
	ReasonSubscriptionsHealthy = "SubscriptionsHealthy"
	// ReasonSubscriptionInvalid: a subscription could not be rendered (its
	// Secret or key is missing, or the bridge refused it).
	ReasonSubscriptionInvalid = "SubscriptionInvalid"
	// ReasonSubscriptionFailing: the bridge fails to deliver to one.
	ReasonSubscriptionFailing = "SubscriptionFailing"
	// ReasonSubscriptionsUnknown: the bridge could not be asked about
	// some, or does not list them yet.
	ReasonSubscriptionsUnknown = "SubscriptionsUnknown"
)

// SubscriptionObservation is what a round learnt of one subscription.
type SubscriptionObservation struct {
	// Invalid says why it could not be rendered; empty when it was.
	Invalid string
	// View is the bridge's entry, nil when the bridge did not list it.
	View *contract.SubscriptionView
	// Unknown says why View is nil.
	Unknown string
}

// SubscriptionStatus is the status entry of the subscription name.
func SubscriptionStatus(name string, o SubscriptionObservation) msgbridgev1alpha1.SubscriptionStatus {
	out := msgbridgev1alpha1.SubscriptionStatus{Name: name, ID: contract.OperatorSubscriptionPrefix + name}
	switch {
	case o.Invalid != "":
		out.State, out.Message = msgbridgev1alpha1.SubscriptionInvalid, o.Invalid
	case o.View == nil:
		out.State, out.Message = msgbridgev1alpha1.SubscriptionUnknown, o.Unknown
	default:
		h := o.View.Health
		out.State, out.DeadLetters = subscriptionState(h.State), h.DeadLetters
		if out.State == msgbridgev1alpha1.SubscriptionFailing {
			// A healthy subscription's last error is history.
			out.LastError = h.LastError
		}
	}
	return out
}

func subscriptionState(s string) msgbridgev1alpha1.SubscriptionState {
	switch s {
	case contract.SubscriptionHealthy:
		return msgbridgev1alpha1.SubscriptionHealthy
	case contract.SubscriptionFailing:
		return msgbridgev1alpha1.SubscriptionFailing
	case contract.SubscriptionDisabled:
		return msgbridgev1alpha1.SubscriptionDisabled
	}
	return msgbridgev1alpha1.SubscriptionUnknown
}

// SubscriptionsHealthy sums up the subscriptions' statuses, naming each one
// that is not well: invalid ones first (a person must fix them), then failing
// ones (a receiver is down), then unknown ones. unreachable, when set, is why
// the bridge could not be asked at all.
func SubscriptionsHealthy(statuses []msgbridgev1alpha1.SubscriptionStatus, unreachable string) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionSubscriptionsHealthy}
	if unreachable != "" {
		return with(c, metav1.ConditionUnknown, ReasonSubscriptionsUnknown, unreachable)
	}
	if m := describeSubscriptions(statuses, msgbridgev1alpha1.SubscriptionInvalid, func(s msgbridgev1alpha1.SubscriptionStatus) string { return s.Message }); m != "" {
		return with(c, metav1.ConditionFalse, ReasonSubscriptionInvalid, m)
	}
	if m := describeSubscriptions(statuses, msgbridgev1alpha1.SubscriptionFailing, func(s msgbridgev1alpha1.SubscriptionStatus) string {
		return fmt.Sprintf("failing (%d dead letters): %s", s.DeadLetters, s.LastError)
	}); m != "" {
		return with(c, metav1.ConditionFalse, ReasonSubscriptionFailing, m)
	}
	if m := describeSubscriptions(statuses, msgbridgev1alpha1.SubscriptionUnknown, func(s msgbridgev1alpha1.SubscriptionStatus) string { return s.Message }); m != "" {
		return with(c, metav1.ConditionUnknown, ReasonSubscriptionsUnknown, m)
	}
	return with(c, metav1.ConditionTrue, ReasonSubscriptionsHealthy, "every subscription is in the bridge and delivering (or disabled)")
}

// describeSubscriptions lists the subscriptions in state with what about
// them, "subscription a: ...; subscription b: ...", or "" when none is.
func describeSubscriptions(statuses []msgbridgev1alpha1.SubscriptionStatus, state msgbridgev1alpha1.SubscriptionState, what func(msgbridgev1alpha1.SubscriptionStatus) string) string {
	var parts []string
	for _, s := range statuses {
		if s.State == state {
			parts = append(parts, "subscription "+s.Name+": "+what(s))
		}
	}
	return strings.Join(parts, "; ")
}
