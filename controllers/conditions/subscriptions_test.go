package conditions

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

func view(state string, deadLetters int64, lastError string) *contract.SubscriptionView {
	return &contract.SubscriptionView{Health: contract.SubscriptionHealth{State: state, DeadLetters: deadLetters, LastError: lastError}}
}

func TestSubscriptionStatus(t *testing.T) {
	cases := []struct {
		name string
		obs  SubscriptionObservation
		want msgbridgev1alpha1.SubscriptionStatus
	}{
		{"healthy keeps no old error", SubscriptionObservation{View: view("healthy", 1, "old")},
			msgbridgev1alpha1.SubscriptionStatus{State: "healthy", DeadLetters: 1}},
		{"failing", SubscriptionObservation{View: view("failing", 3, "HTTP 503")},
			msgbridgev1alpha1.SubscriptionStatus{State: "failing", DeadLetters: 3, LastError: "HTTP 503"}},
		{"disabled", SubscriptionObservation{View: view("disabled", 0, "")}, msgbridgev1alpha1.SubscriptionStatus{State: "disabled"}},
		{"a state this operator does not know", SubscriptionObservation{View: view("paused", 0, "")}, msgbridgev1alpha1.SubscriptionStatus{State: "unknown"}},
		{"invalid", SubscriptionObservation{Invalid: "Secret x not found"}, msgbridgev1alpha1.SubscriptionStatus{State: "invalid", Message: "Secret x not found"}},
		{"not listed", SubscriptionObservation{Unknown: "the bridge does not list it"},
			msgbridgev1alpha1.SubscriptionStatus{State: "unknown", Message: "the bridge does not list it"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.Name, tc.want.ID = "crm", "k8s-crm"
			if got := SubscriptionStatus("crm", tc.obs); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSubscriptionsHealthy(t *testing.T) {
	st := func(name string, state msgbridgev1alpha1.SubscriptionState, msg string) msgbridgev1alpha1.SubscriptionStatus {
		return msgbridgev1alpha1.SubscriptionStatus{Name: name, State: state, Message: msg, LastError: msg}
	}
	cases := []struct {
		name        string
		statuses    []msgbridgev1alpha1.SubscriptionStatus
		unreachable string
		status      metav1.ConditionStatus
		reason      string
		names       []string
	}{
		{"all well", []msgbridgev1alpha1.SubscriptionStatus{st("a", "healthy", ""), st("b", "disabled", "")}, "", metav1.ConditionTrue, ReasonSubscriptionsHealthy, nil},
		{"invalid before failing", []msgbridgev1alpha1.SubscriptionStatus{st("a", "failing", "HTTP 503"), st("b", "invalid", "no key"), st("c", "invalid", "refused")},
			"", metav1.ConditionFalse, ReasonSubscriptionInvalid, []string{"subscription b: no key", "subscription c: refused"}},
		{"failing", []msgbridgev1alpha1.SubscriptionStatus{st("a", "failing", "HTTP 503"), st("b", "unknown", "")},
			"", metav1.ConditionFalse, ReasonSubscriptionFailing, []string{"subscription a: failing (0 dead letters): HTTP 503"}},
		{"not listed", []msgbridgev1alpha1.SubscriptionStatus{st("a", "healthy", ""), st("b", "unknown", "not listed")},
			"", metav1.ConditionUnknown, ReasonSubscriptionsUnknown, []string{"subscription b: not listed"}},
		{"bridge unreachable", []msgbridgev1alpha1.SubscriptionStatus{st("a", "invalid", "x")}, "no bridge pod is ready",
			metav1.ConditionUnknown, ReasonSubscriptionsUnknown, []string{"no bridge pod is ready"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := SubscriptionsHealthy(tc.statuses, tc.unreachable)
			if c.Type != msgbridgev1alpha1.ConditionSubscriptionsHealthy || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("got %s/%s (%s), want %s/%s", c.Status, c.Reason, c.Message, tc.status, tc.reason)
			}
			for _, n := range tc.names {
				if !strings.Contains(c.Message, n) {
					t.Errorf("message %q lacks %q", c.Message, n)
				}
			}
		})
	}
}
