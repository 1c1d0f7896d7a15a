package controllers

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// Issue 32.4: an operator upgrade moves the bridges on the default image to
// the new one in waves: at most MaxRollingBridges restart at once, the next
// one only after an earlier one runs its new revision and is connected; a
// bridge that pins its image stays on it.
func TestImageRolloutInWaves(t *testing.T) {
	ns := testNamespace(t)
	names := []string{"a", "b", "c"}
	urls := map[string]string{}
	for _, name := range append(names, "pinned") {
		fb := newFakeBridge(t, testAdminToken)
		fb.set(connectedState(0))
		urls[name] = fb.URL
	}
	var bridges []*msgbridgev1alpha1.MessagingBridge
	t.Run("operator v1", func(t *testing.T) {
		startOperator(t, ns, operatorOptions{bridges: urls, bridgeImage: "msgbridge:v1"})
		for _, name := range append(names, "pinned") {
			mb := newBridgeWithKeys(t, ns, name)
			if name == "pinned" {
				mb.Spec.Image = "msgbridge:pinned"
			}
			create(t, mb)
			bridges = append(bridges, mb)
		}
		for _, mb := range bridges {
			markPodReady(t, mb)
			waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, conditions.ReasonConnected)
		}
	})

	startOperator(t, ns, operatorOptions{bridges: urls, bridgeImage: "msgbridge:v2", maxRolling: 1})
	done := map[string]bool{}
	for wave := 1; wave <= len(names); wave++ {
		moved := waitImages(t, ns, names, wave, done)
		done[moved] = true
		if wave == 1 {
			// The others were held, and say so.
			for _, mb := range bridges[:len(names)] {
				if mb.Name != moved {
					waitEvent(t, ns, mb.Name, corev1.EventTypeNormal, "RolloutWaiting")
				}
			}
			if got := countImages(t, ns, names, "msgbridge:v2"); got != 1 {
				t.Fatalf("%d bridges moved to v2 while one was restarting, want 1", got)
			}
		}
		markPodReady(t, &msgbridgev1alpha1.MessagingBridge{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: moved}})
		waitEvent(t, ns, moved, corev1.EventTypeNormal, "RolloutDone")
	}
	var pinned appsv1.StatefulSet
	getObject(t, client.ObjectKey{Namespace: ns, Name: "pinned"}, &pinned)
	if img := runningImage(&pinned); img != "msgbridge:pinned" {
		t.Errorf("the pinned bridge runs %s", img)
	}
}

// waitImages waits until exactly n of the named bridges run msgbridge:v2
// and returns the one among them, not done, marked as rolling out.
func waitImages(t *testing.T, ns string, names []string, n int, done map[string]bool) string {
	t.Helper()
	var rolling string
	eventually(t, 20*time.Second, func() (bool, string) {
		rolling = ""
		for _, name := range names {
			var sts appsv1.StatefulSet
			getObject(t, client.ObjectKey{Namespace: ns, Name: name}, &sts)
			if _, marked := sts.Annotations[specs.RolloutStartedAnnotation]; marked && !done[name] && runningImage(&sts) == "msgbridge:v2" {
				rolling = name
			}
		}
		got := countImages(t, ns, names, "msgbridge:v2")
		return got == n && rolling != "", fmt.Sprintf("%d bridges on v2 (rolling: %q), want %d", got, rolling, n)
	})
	return rolling
}

func countImages(t *testing.T, ns string, names []string, image string) int {
	t.Helper()
	count := 0
	for _, name := range names {
		var sts appsv1.StatefulSet
		getObject(t, client.ObjectKey{Namespace: ns, Name: name}, &sts)
		if runningImage(&sts) == image {
			count++
		}
	}
	return count
}

// Issue 44.6: the roll-out mark goes once the bridge is connected on its new
// image (an apply that only drops the annotation was skipped as no change,
// so the mark stayed), and a bridge that then disconnects holds no roll-out
// slot: another bridge may move.
func TestRolloutMarkRemovedOnceConnected(t *testing.T) {
	ns := testNamespace(t)
	moved, held := newFakeBridge(t, testAdminToken), newFakeBridge(t, testAdminToken)
	moved.set(connectedState(0))
	held.set(connectedState(0))
	urls := map[string]string{"moved": moved.URL, "held": held.URL}
	first, second := newBridgeWithKeys(t, ns, "moved"), newBridgeWithKeys(t, ns, "held")
	// held is pinned at first, so that it asks for a slot only later.
	second.Spec.Image = "msgbridge:pinned"
	t.Run("operator v1", func(t *testing.T) {
		startOperator(t, ns, operatorOptions{bridges: urls, bridgeImage: "msgbridge:v1"})
		for _, mb := range []*msgbridgev1alpha1.MessagingBridge{first, second} {
			create(t, mb)
			markPodReady(t, mb)
			waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, conditions.ReasonConnected)
		}
	})

	startOperator(t, ns, operatorOptions{bridges: urls, bridgeImage: "msgbridge:v2", maxRolling: 1})
	waitStatefulSet(t, first, func(sts *appsv1.StatefulSet) (bool, string) {
		_, marked := sts.Annotations[specs.RolloutStartedAnnotation]
		return marked && runningImage(sts) == "msgbridge:v2", "runs " + runningImage(sts) + fmt.Sprintf(", marked %v", marked)
	})
	markPodReady(t, first)
	waitStatefulSet(t, first, func(sts *appsv1.StatefulSet) (bool, string) {
		started, marked := sts.Annotations[specs.RolloutStartedAnnotation]
		return !marked, "still marked as rolling out since " + started
	})
	waitEvent(t, ns, first.Name, corev1.EventTypeNormal, "RolloutDone")

	moved.set(bridgeclient.State{State: "disconnected", Reason: "network"})
	waitCondition(t, first, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonDisconnected)
	patchBridge(t, second, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Image = "" })
	waitStatefulSet(t, second, func(sts *appsv1.StatefulSet) (bool, string) {
		return runningImage(sts) == "msgbridge:v2", "runs " + runningImage(sts) + " while the disconnected bridge holds no roll-out"
	})

	// RolloutDone once: the recorder writes a repeat as a series of the
	// first event (count 2), so a repeat shows as a series.
	polls := moved.polls.Load()
	eventually(t, 20*time.Second, func() (bool, string) {
		return moved.polls.Load() >= polls+5, "waiting for more rounds of the moved bridge"
	})
	done := findEvents(t, ns, first.Name, corev1.EventTypeNormal, "RolloutDone")
	if len(done) != 1 || done[0].Series != nil {
		t.Errorf("RolloutDone emitted as %d events (%+v), want one without a series", len(done), done)
	}
}
