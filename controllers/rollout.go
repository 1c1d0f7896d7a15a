package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// RolloutTimeout ends a bridge's turn in a roll-out that never reports
// connected again (a broken image, an account logged out meanwhile), so
// that one bridge cannot hold the fleet's roll-out for ever.
const RolloutTimeout = 10 * time.Minute

// rollouts bounds how many bridges restart at once when the default image
// changes (an operator upgrade): without it every bridge on the default
// image would restart together and reconnect to WhatsApp at once.
type rollouts struct {
	mu sync.Mutex
	// admitted are bridges this process moved to the new image whose
	// StatefulSet the cache may not show yet.
	admitted map[types.NamespacedName]time.Time
}

// bridgeImage decides the image of rd's StatefulSet and its roll-out mark.
// A pinned image (spec.image), a new StatefulSet, a bridge already on the
// default image or one that serves nobody (suspended, not connected) takes
// the default at once. A connected bridge moves only while fewer than
// MaxRollingBridges are restarting; otherwise it keeps its running image,
// says so in its status and waits for the next round.
func (r *MessagingBridgeReconciler) bridgeImage(ctx context.Context, rd *round) (image, started string, err error) {
	if err := r.readStatefulSet(ctx, rd); err != nil {
		return "", "", err
	}
	live := rd.statefulSet
	running := runningImage(live)
	switch {
	case rd.mb.Spec.Image != "":
		return rd.mb.Spec.Image, "", nil
	case live == nil || running == r.BridgeImage:
		return r.BridgeImage, r.keepRolloutMark(rd), nil
	case r.MaxRollingBridges <= 0 || rd.mb.Spec.Suspend || !sessionConnected(rd.mb):
		return r.BridgeImage, "", nil
	}
	r.rollouts.mu.Lock()
	defer r.rollouts.mu.Unlock()
	key := client.ObjectKeyFromObject(rd.mb)
	if at, ok := r.rollouts.admitted[key]; ok && r.now().Sub(at) <= RolloutTimeout {
		return r.BridgeImage, at.Format(time.RFC3339), nil // admitted; the cache is behind
	}
	rolling, err := r.rollingBridges(ctx)
	if err != nil {
		return "", "", err
	}
	if rolling >= r.MaxRollingBridges {
		rd.rolloutWaiting = fmt.Sprintf("waiting to move from %s to %s: %d bridges are restarting, at most %d at once",
			running, r.BridgeImage, rolling, r.MaxRollingBridges)
		if r.events.first(key, rd.mb.UID, "Rollout", "waiting/"+r.BridgeImage) {
			r.event(rd.mb, corev1.EventTypeNormal, "RolloutWaiting", "Rollout", rd.rolloutWaiting)
		}
		return running, "", nil
	}
	now := r.now().UTC().Truncate(time.Second)
	if r.rollouts.admitted == nil {
		r.rollouts.admitted = map[types.NamespacedName]time.Time{}
	}
	r.rollouts.admitted[key] = now
	r.event(rd.mb, corev1.EventTypeNormal, "RolloutStarted", "Rollout",
		fmt.Sprintf("moving from %s to %s (%d other bridges restarting)", running, r.BridgeImage, rolling))
	return r.BridgeImage, now.Format(time.RFC3339), nil
}

// keepRolloutMark keeps a bridge's roll-out mark until it is connected on
// its new image; dropping it reports the turn done.
func (r *MessagingBridgeReconciler) keepRolloutMark(rd *round) string {
	if rd.statefulSet == nil {
		return ""
	}
	started := rd.statefulSet.Annotations[specs.RolloutStartedAnnotation]
	if started == "" {
		return ""
	}
	if rolloutInFlight(rd.statefulSet, rd.mb, r.now()) {
		return started
	}
	// The cache may show the mark for a round after the apply removed it.
	if r.events.first(client.ObjectKeyFromObject(rd.mb), rd.mb.UID, "Rollout", "done/"+started) {
		r.event(rd.mb, corev1.EventTypeNormal, "RolloutDone", "Rollout", "running "+runningImage(rd.statefulSet)+" and connected")
	}
	return ""
}

// rollingBridges counts the bridges whose roll-out is in flight, among the
// StatefulSets the cache holds and those admitted since.
func (r *MessagingBridgeReconciler) rollingBridges(ctx context.Context) (int, error) {
	var sets appsv1.StatefulSetList
	if err := r.List(ctx, &sets, client.MatchingLabels{"app.kubernetes.io/managed-by": "msgbridge-operator"}); err != nil {
		return 0, err
	}
	seen := map[types.NamespacedName]bool{}
	count := 0
	for i := range sets.Items {
		sts := &sets.Items[i]
		key := client.ObjectKeyFromObject(sts)
		// The cache shows the move: its mark, or none left once done.
		seen[key] = runningImage(sts) == r.BridgeImage
		if _, marked := sts.Annotations[specs.RolloutStartedAnnotation]; !marked {
			continue
		}
		var mb msgbridgev1alpha1.MessagingBridge
		if err := r.Get(ctx, key, &mb); client.IgnoreNotFound(err) != nil {
			return 0, err
		}
		if rolloutInFlight(sts, &mb, r.now()) {
			count++
		}
	}
	for key, at := range r.rollouts.admitted {
		switch {
		case seen[key] || r.now().Sub(at) > RolloutTimeout:
			delete(r.rollouts.admitted, key)
		default:
			count++
		}
	}
	return count, nil
}

// rolloutInFlight: the StatefulSet carries a roll-out mark younger than
// RolloutTimeout, and its bridge is not yet running the new revision and
// connected on it.
func rolloutInFlight(sts *appsv1.StatefulSet, mb *msgbridgev1alpha1.MessagingBridge, now time.Time) bool {
	started, err := time.Parse(time.RFC3339, sts.Annotations[specs.RolloutStartedAnnotation])
	if err != nil || now.Sub(started) > RolloutTimeout {
		return false
	}
	rolledOut := sts.Status.ObservedGeneration >= sts.Generation && sts.Status.UpdateRevision == sts.Status.CurrentRevision &&
		sts.Status.ReadyReplicas > 0
	return !rolledOut || !sessionConnected(mb)
}

func sessionConnected(mb *msgbridgev1alpha1.MessagingBridge) bool {
	return meta.IsStatusConditionTrue(mb.Status.Conditions, msgbridgev1alpha1.ConditionSessionConnected)
}

// runningImage is the bridge container's image in sts's template, "" for
// no StatefulSet.
func runningImage(sts *appsv1.StatefulSet) string {
	if sts == nil {
		return ""
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == specs.ContainerName {
			return c.Image
		}
	}
	return ""
}
