package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// Issue 16: a bridge that reports WhatsApp's restriction of sending gets
// SendingRestricted=True with the end in its message and in
// status.session.restrictedUntil, a Warning event, and Ready stays True (the
// bridge is up and receiving); when the restriction ends the condition
// turns False and the end leaves the status.
func TestSendingRestrictedCondition(t *testing.T) {
	ns, mb, bridge := connectedBridge(t)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSendingRestricted, metav1.ConditionFalse, conditions.ReasonNotRestricted)

	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	restricted := connectedState(0)
	restricted.Reason, restricted.RestrictedUntil = contract.ReasonRestricted, &until
	bridge.set(restricted)
	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionSendingRestricted, metav1.ConditionTrue, conditions.ReasonRestricted)
	c := meta.FindStatusCondition(got.Status.Conditions, msgbridgev1alpha1.ConditionSendingRestricted)
	if !strings.Contains(c.Message, until.Format(time.RFC3339)) {
		t.Errorf("message %q does not name the end %s", c.Message, until.Format(time.RFC3339))
	}
	if ready := meta.FindStatusCondition(got.Status.Conditions, msgbridgev1alpha1.ConditionReady); ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready is %s/%s while restricted; it must stay True", ready.Status, ready.Reason)
	}
	s := waitSessionState(t, mb, msgbridgev1alpha1.SessionConnected)
	eventually(t, 10*time.Second, func() (bool, string) {
		s = waitSessionState(t, mb, msgbridgev1alpha1.SessionConnected)
		return s.RestrictedUntil != nil && s.RestrictedUntil.Time.Equal(until) && s.Reason == "restricted",
			"session " + s.Reason
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		n := len(findEvents(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonRestricted))
		return n == 1, "no Warning Restricted event"
	})

	bridge.set(connectedState(0))
	got = waitCondition(t, mb, msgbridgev1alpha1.ConditionSendingRestricted, metav1.ConditionFalse, conditions.ReasonNotRestricted)
	if got.Status.Session.RestrictedUntil != nil {
		t.Errorf("restrictedUntil %s kept after the restriction ended", got.Status.Session.RestrictedUntil)
	}
}
