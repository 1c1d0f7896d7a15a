package controllers

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// observe reads what the bridge is doing: whether its pod is ready and, if
// so, its session. It runs whatever the apply steps met, so that a stalled
// resource still reports its session truthfully.
func (r *MessagingBridgeReconciler) observe(ctx context.Context, rd *round) error {
	mb := rd.mb
	if err := r.readStatefulSet(ctx, rd); err != nil {
		return err
	}
	available, imageStall := r.observeAvailable(ctx, rd)
	rd.setCondition(available)
	suspended := conditions.Suspended(available)

	obs := conditions.SessionObservation{Suspended: suspended, PodReady: available.Status == metav1.ConditionTrue}
	if obs.PodReady {
		obs.State, obs.Err = r.readSession(ctx, rd)
	}
	session := conditions.SessionConnected(obs, specs.HeartbeatInterval(mb), r.now())
	rd.setCondition(session)
	rd.recordObservedStall(imageStall, session)
	rd.setCondition(conditions.SendingRestricted(obs, r.now()))
	unreachable := ""
	if obs.Suspended || !obs.PodReady || obs.Err != nil || obs.State == nil {
		unreachable = session.Message
	}
	if !rd.reobserving {
		r.reconcileSubscriptions(ctx, rd, unreachable)
		r.reconcileAPIKeys(ctx, rd, unreachable)
	}
	recordSessionMetrics(mb.Namespace, mb.Name, session.Status == metav1.ConditionTrue, suspended, obs.State)
	recordSessionReason(mb.Namespace, mb.Name, session.Reason)
	rd.status.Workload = conditions.Workload(rd.statefulSet, obs.State, rd.mb.Status.Workload, specs.ClaimName(mb))
	if !rd.reobserving { // a re-observation keeps the last round's word
		rd.status.Workload.Rollout = rd.rolloutWaiting
	}
	if obs.State != nil {
		rd.status.Session = conditions.Session(obs.State)
	} else {
		rd.status.Session = conditions.UnobservedSession(rd.mb.Status.Session, suspended)
	}

	rd.setCondition(conditions.Ready(
		*meta.FindStatusCondition(rd.status.Conditions, msgbridgev1alpha1.ConditionReconciled),
		available, session))
	recordConditionMetrics(mb.Namespace, mb.Name, rd.status.Conditions)
	rd.status.ObservedGeneration = mb.Generation
	return nil
}

// observeAvailable is the Available condition, and the blocker of a pod
// that cannot pull its image.
func (r *MessagingBridgeReconciler) observeAvailable(ctx context.Context, rd *round) (metav1.Condition, *conditions.Blocker) {
	available := conditions.Available(rd.statefulSet, rd.mb.Spec.Suspend, rd.scaleErr)
	stall := r.imagePullStall(ctx, rd, available)
	if stall != nil {
		return conditions.ImagePullFailed(stall), stall
	}
	return available, nil
}

// recordObservedStall sets Stalled for what only a person ends among what
// the observation found: an image the pod cannot pull, a full volume, a
// client version WhatsApp refuses. A blocker of the apply steps keeps its
// Stalled; a re-observation leaves Stalled to the round after it.
func (rd *round) recordObservedStall(imageStall *conditions.Blocker, session metav1.Condition) {
	if rd.blocker != nil || rd.reobserving {
		return
	}
	stall := imageStall
	if stall == nil {
		stall = conditions.SessionStall(session)
	}
	rd.setCondition(conditions.Stalled(stall))
}

// imagePullStall reads the pod of a bridge whose StatefulSet has no ready
// replica, and returns its blocker when it waits on an image it cannot pull.
// Only then: one uncached GET of one pod, no watch of every pod in the
// cluster. A pod that cannot be read says nothing (the reason is logged).
// A re-observation leaves it, with Stalled, to the round after it.
func (r *MessagingBridgeReconciler) imagePullStall(ctx context.Context, rd *round, available metav1.Condition) *conditions.Blocker {
	sts := rd.statefulSet
	if sts == nil || rd.mb.Spec.Suspend || available.Status == metav1.ConditionTrue || rd.reobserving {
		return nil
	}
	var pod corev1.Pod
	err := r.apiReader().Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: sts.Name + "-0"}, &pod)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Info("cannot read the bridge pod to tell why it is not ready", "error", err.Error())
		}
		return nil
	}
	return conditions.ImagePullStall(&pod)
}

func (r *MessagingBridgeReconciler) readSession(ctx context.Context, rd *round) (*bridgeclient.State, error) {
	token, err := r.roundAdminToken(ctx, rd)
	if err != nil {
		return nil, err
	}
	return r.bridge().State(ctx, r.bridgeURL(rd.mb), token)
}

// roundAdminToken is the admin token of the bridge: the one the round
// resolved, or read now when the apply steps stopped before.
func (r *MessagingBridgeReconciler) roundAdminToken(ctx context.Context, rd *round) (string, error) {
	if token, ok := rd.credentials[contract.EnvAdminToken]; ok {
		return string(token), nil
	}
	t, err := r.adminToken(ctx, rd.mb)
	if err != nil {
		return "", fmt.Errorf("reading the admin token: %w", err)
	}
	return t, nil
}

// writeStatus writes the round's status when it differs from the stored one
// (see conditions.StatusToWrite), then reports the transitions as events.
func (r *MessagingBridgeReconciler) writeStatus(ctx context.Context, rd *round) error {
	next, changed := conditions.StatusToWrite(rd.mb.Status, rd.status, r.now(), r.HeartbeatStatusRefresh)
	if !changed {
		return nil
	}
	old := rd.mb.Status.DeepCopy()
	// A merge patch without resourceVersion: the status is this operator's
	// alone, and it describes the generation read, which stays true if the
	// spec moved on meanwhile (that change reconciles again).
	patch := client.MergeFrom(rd.mb.DeepCopy())
	over := rd.mb.ResourceVersion
	rd.mb.Status = next
	if err := r.Status().Patch(ctx, rd.mb, patch, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	r.statuses.remember(client.ObjectKeyFromObject(rd.mb), over, next)
	r.recordTransitions(rd.mb, old.Conditions, next.Conditions)
	return nil
}

// recordTransitions emits one event per change of SessionConnected or
// Stalled, per start and end of a SendingRestricted, and per subscription
// trouble and its end, never one per poll. A first Stalled=True is reported too: a missing Secret on creation
// deserves a Warning.
func (r *MessagingBridgeReconciler) recordTransitions(mb *msgbridgev1alpha1.MessagingBridge, old, next []metav1.Condition) {
	for _, t := range []string{msgbridgev1alpha1.ConditionSessionConnected, msgbridgev1alpha1.ConditionStalled,
		msgbridgev1alpha1.ConditionSendingRestricted, msgbridgev1alpha1.ConditionSubscriptionsHealthy} {
		now := meta.FindStatusCondition(next, t)
		was := meta.FindStatusCondition(old, t)
		if !reportable(t, was, now) {
			continue
		}
		if !r.events.first(client.ObjectKeyFromObject(mb), mb.UID, t, string(now.Status)+"/"+now.Reason) {
			continue
		}
		r.event(mb, eventType(t, now), now.Reason, t, fmt.Sprintf("%s is %s: %s", t, now.Status, now.Message))
	}
}

// reportable tells whether the change of condition t from was to now is
// news: a change of status or reason, but not a first observation unless it
// is a trouble (Stalled or SendingRestricted True); and SendingRestricted
// only when it starts or ends, not when it moves between its False and
// Unknown reasons (a suspend, an unreachable bridge), which other
// conditions already report.
func reportable(t string, was, now *metav1.Condition) bool {
	switch {
	case now == nil || (was != nil && was.Status == now.Status && was.Reason == now.Reason):
		return false
	case t == msgbridgev1alpha1.ConditionSendingRestricted:
		return now.Status == metav1.ConditionTrue || (was != nil && was.Status == metav1.ConditionTrue)
	case t == msgbridgev1alpha1.ConditionSubscriptionsHealthy:
		// A subscription going wrong, and its recovery; not the Unknown
		// of every bridge restart.
		return now.Status == metav1.ConditionFalse || (was != nil && was.Status == metav1.ConditionFalse && now.Status == metav1.ConditionTrue)
	case was == nil:
		return t == msgbridgev1alpha1.ConditionStalled && now.Status == metav1.ConditionTrue
	}
	return true
}

// eventType is Warning for trouble; a suspend is what the user asked for:
// Normal.
func eventType(t string, now *metav1.Condition) string {
	trouble := now.Status == metav1.ConditionTrue
	switch t {
	case msgbridgev1alpha1.ConditionSessionConnected:
		trouble = now.Status != metav1.ConditionTrue && now.Reason != conditions.ReasonSuspended
	case msgbridgev1alpha1.ConditionSubscriptionsHealthy:
		trouble = now.Status == metav1.ConditionFalse
	}
	if trouble {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

func (r *MessagingBridgeReconciler) bridge() *bridgeclient.Client {
	if r.Bridge != nil {
		return r.Bridge
	}
	return &bridgeclient.Client{}
}

func (r *MessagingBridgeReconciler) random() io.Reader {
	if r.Random != nil {
		return r.Random
	}
	return specs.DefaultRandom
}
