package conditions

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// Issue 44.8 and the engine's client_outdated: a state only a person ends is
// Stalled (kstatus Failed, Argo CD Degraded); a state that ends by itself,
// or by WhatsApp's doing, is not.
func TestSessionStall(t *testing.T) {
	cases := []struct {
		reason contract.Reason
		state  contract.SessionState
		stall  string
	}{
		{contract.ReasonDiskFull, "disconnected", ReasonDiskFull},
		{contract.ReasonClientOutdated, "disconnected", ReasonClientOutdated},
		{contract.ReasonNetwork, "connecting", ""},
		{contract.ReasonTemporaryBan, "disconnected", ""},
		{contract.ReasonLoggedOut, "logged_out", ""},
		{contract.ReasonNone, "unpaired", ""},
	}
	for _, tc := range cases {
		obs := SessionObservation{PodReady: true, State: &bridgeclient.State{State: tc.state, Reason: tc.reason}}
		session := SessionConnected(obs, 5*time.Second, now)
		b := SessionStall(session)
		switch {
		case tc.stall == "" && b != nil:
			t.Errorf("%s: stalled with %s (%s), want not stalled", tc.reason, b.Reason, b.Message)
		case tc.stall != "" && (b == nil || b.Reason != tc.stall || b.Message == ""):
			t.Errorf("%s: stall %+v, want reason %s with a message", tc.reason, b, tc.stall)
		case tc.stall != "" && Stalled(b).Status != metav1.ConditionTrue:
			t.Errorf("%s: Stalled is %s", tc.reason, Stalled(b).Status)
		}
	}
	if b := SessionStall(SessionConnected(SessionObservation{Suspended: true}, 5*time.Second, now)); b != nil {
		t.Errorf("a suspended bridge is stalled: %+v", b)
	}
}

func TestImagePullStall(t *testing.T) {
	waiting := func(reason string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "sales-0"},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
				Name: "bridge", Image: "registry.test/msgbridge:nope",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "manifest unknown"}},
			}}},
		}
	}
	for _, reason := range []string{"ImagePullBackOff", "ErrImagePull", "InvalidImageName"} {
		b := ImagePullStall(waiting(reason))
		if b == nil || b.Reason != ReasonImagePullFailed {
			t.Fatalf("%s: stall %+v, want %s", reason, b, ReasonImagePullFailed)
		}
		for _, want := range []string{"sales-0", "registry.test/msgbridge:nope", reason, "manifest unknown"} {
			if !strings.Contains(b.Message, want) {
				t.Errorf("%s: message %q does not name %q", reason, b.Message, want)
			}
		}
		if a := ImagePullFailed(b); a.Status != metav1.ConditionFalse || a.Reason != ReasonImagePullFailed {
			t.Errorf("%s: Available %s/%s", reason, a.Status, a.Reason)
		}
	}
	for _, pod := range []*corev1.Pod{nil, waiting("ContainerCreating"), waiting("CrashLoopBackOff"), {}} {
		if b := ImagePullStall(pod); b != nil {
			t.Errorf("pod %+v: stalled with %+v", pod, b)
		}
	}
}
