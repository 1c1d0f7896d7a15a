package conditions

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

func TestStatusToWrite(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	cond := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: msgbridgev1alpha1.ConditionSessionConnected, Status: status, Reason: reason}}
	}
	session := func(state msgbridgev1alpha1.SessionState, heartbeat *metav1.Time) *msgbridgev1alpha1.SessionStatus {
		return &msgbridgev1alpha1.SessionStatus{State: state, Account: "49170", LastHeartbeatTime: heartbeat}
	}
	stored := msgbridgev1alpha1.MessagingBridgeStatus{
		ObservedGeneration: 1,
		Conditions:         cond(metav1.ConditionTrue, ReasonConnected),
		Session: &msgbridgev1alpha1.SessionStatus{State: msgbridgev1alpha1.SessionConnected, Account: "49170",
			LastHeartbeatTime: at(-time.Hour), LastProbeTime: at(-time.Hour)},
	}
	cases := []struct {
		name          string
		next          msgbridgev1alpha1.MessagingBridgeStatus
		refresh       time.Duration
		write         bool
		wantHeartbeat *metav1.Time
	}{
		{"only the heartbeat moved", msgbridgev1alpha1.MessagingBridgeStatus{ObservedGeneration: 1, Conditions: cond(metav1.ConditionTrue, ReasonConnected),
			Session: session(msgbridgev1alpha1.SessionConnected, at(0))}, 0, false, at(-time.Hour)},
		{"heartbeat moved past the refresh", msgbridgev1alpha1.MessagingBridgeStatus{ObservedGeneration: 1, Conditions: cond(metav1.ConditionTrue, ReasonConnected),
			Session: session(msgbridgev1alpha1.SessionConnected, at(0))}, 5 * time.Minute, true, at(0)},
		{"heartbeat moved less than the refresh", msgbridgev1alpha1.MessagingBridgeStatus{ObservedGeneration: 1, Conditions: cond(metav1.ConditionTrue, ReasonConnected),
			Session: session(msgbridgev1alpha1.SessionConnected, at(-time.Hour+time.Minute))}, 5 * time.Minute, false, at(-time.Hour)},
		{"state changed", msgbridgev1alpha1.MessagingBridgeStatus{ObservedGeneration: 1, Conditions: cond(metav1.ConditionFalse, ReasonLoggedOut),
			Session: session(msgbridgev1alpha1.SessionLoggedOut, at(0))}, 0, true, at(0)},
		{"new generation", msgbridgev1alpha1.MessagingBridgeStatus{ObservedGeneration: 2, Conditions: cond(metav1.ConditionTrue, ReasonConnected),
			Session: session(msgbridgev1alpha1.SessionConnected, at(0))}, 0, true, at(0)},
		{"unreadable: the last reading is kept", msgbridgev1alpha1.MessagingBridgeStatus{ObservedGeneration: 1,
			Conditions: cond(metav1.ConditionUnknown, ReasonStatusUnreachable)}, 0, true, at(-time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, write := StatusToWrite(*stored.DeepCopy(), tc.next, now, tc.refresh)
			if write != tc.write {
				t.Fatalf("write %v, want %v", write, tc.write)
			}
			if !got.Session.LastHeartbeatTime.Equal(tc.wantHeartbeat) {
				t.Errorf("heartbeat %v, want %v", got.Session.LastHeartbeatTime, tc.wantHeartbeat)
			}
			// The probe time moves with a write of a reading, never alone.
			wantProbe := stored.Session.LastProbeTime
			if write && tc.next.Session != nil {
				wantProbe = at(0)
			}
			if !got.Session.LastProbeTime.Equal(wantProbe) {
				t.Errorf("probe time %v, want %v", got.Session.LastProbeTime, wantProbe)
			}
		})
	}
}

// Issue 32.5: the status names what runs: the image once rolled out, the
// bridge's version, the pod and the claim.
func TestWorkload(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "sales", Generation: 2}}
	sts.Spec.Template.Spec.Containers = []corev1.Container{{Name: "bridge", Image: "msgbridge:v2"}}
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 1, CurrentRevision: "sales-1", UpdateRevision: "sales-2"}
	last := &msgbridgev1alpha1.WorkloadStatus{Image: "msgbridge:v1", Version: "v1"}

	rolling := Workload(sts, nil, last, "data-sales-0")
	if rolling.Image != "msgbridge:v1" || rolling.Version != "v1" || rolling.Pod != "sales-0" || rolling.Claim != "data-sales-0" {
		t.Errorf("while rolling out: %+v", rolling)
	}
	sts.Status.CurrentRevision = "sales-2"
	done := Workload(sts, &bridgeclient.State{Version: "v2"}, rolling, "data-sales-0")
	if done.Image != "msgbridge:v2" || done.Version != "v2" {
		t.Errorf("rolled out: %+v", done)
	}
	sts.Status.Replicas = 0
	if suspended := Workload(sts, nil, done, "data-sales-0"); suspended.Pod != "" || suspended.Claim != "data-sales-0" {
		t.Errorf("suspended: %+v", suspended)
	}
}
