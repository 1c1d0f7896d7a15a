// Package controllers reconciles MessagingBridge resources into a running
// bridge (a StatefulSet, a Service and Secrets) and mirrors the bridge's
// session into the resource's status.
package controllers

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// FieldOwner names this operator in managed fields and Server-Side Apply.
const FieldOwner = "msgbridge-operator"

// DefaultPollInterval is how often a bridge's session state is read.
const DefaultPollInterval = 30 * time.Second

// MessagingBridgeReconciler turns a MessagingBridge into the objects that run
// its bridge, and mirrors the bridge's session into the status.
type MessagingBridgeReconciler struct {
	client.Client

	// Recorder emits events on condition transitions; nil emits none.
	Recorder events.EventRecorder

	// BridgeImage runs bridges whose spec names no image: the operator's
	// own image, which ships /bridge beside /manager.
	BridgeImage string

	// Bridge calls the bridges' admin API.
	Bridge *bridgeclient.Client

	// BridgeURL maps a MessagingBridge to its bridge's base URL; nil means
	// its Service, http://<name>.<namespace>.svc:8080. Tests point it at
	// an httptest server.
	BridgeURL func(*msgbridgev1alpha1.MessagingBridge) string

	// PollInterval is how often each bridge's session is read; 0 means
	// DefaultPollInterval.
	PollInterval time.Duration

	// HeartbeatStatusRefresh: a heartbeat that only moved forward is
	// written to the status once it moved by this much (see
	// conditions.StatusToWrite); 0 writes it only with another change.
	HeartbeatStatusRefresh time.Duration

	// Random generates credentials; nil means crypto/rand.
	Random io.Reader

	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// MaxRollingBridges bounds the connected bridges that restart at once
	// to move to a new BridgeImage; the next wave starts as earlier ones
	// report connected. 0 moves every bridge at once.
	MaxRollingBridges int

	// APIReader reads Secrets the metadata cache says changed, uncached;
	// SetupWithManager sets the manager's when nil. See secretstore.go.
	APIReader client.Reader

	secrets  secretStore
	events   eventMemory
	statuses statusMemory
	rollouts rollouts
	// subscriptions remembers what was put into each bridge.
	subscriptions subscriptionMemory
	// apiKeys remembers the digests of the keys put into each bridge, as
	// subscriptions does for its subscriptions.
	apiKeys subscriptionMemory
	// resume holds the rounds until a newly elected leader re-observed
	// every bridge; SetupWithManager sets it.
	resume *resumeGate
}

// Least privilege: every write is a create, an apply or a patch, never an
// update or a delete (owned objects go with their MessagingBridge through
// garbage collection), except the delete of a PodDisruptionBudget the spec
// no longer asks for. Of pods only get: the pod of a bridge that is not
// ready is read to tell an image it cannot pull (no list, no watch, no
// write). The finalizers subresource is what
// the API server checks before it lets an owner reference block deletion.
//
// +kubebuilder:rbac:groups=msgbridge.io,resources=messagingbridges,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=msgbridge.io,resources=messagingbridges/status,verbs=get;patch
// +kubebuilder:rbac:groups=msgbridge.io,resources=messagingbridges/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// round is one reconcile of one MessagingBridge: what the steps found and
// the status they build. The status is written once, at the end, and only
// when it differs from the stored one.
type round struct {
	mb     *msgbridgev1alpha1.MessagingBridge
	status msgbridgev1alpha1.MessagingBridgeStatus

	// generated is the generated Secret as this round left it: read from
	// the cache, or just created, which the cache may not show yet.
	generated *corev1.Secret
	// credentials are the values the bridge reads, keyed by env name.
	credentials map[string][]byte
	// keyFingerprint identifies the encryption key among credentials.
	keyFingerprint string
	// blocker stops the apply steps until a human fixes it.
	blocker *conditions.Blocker
	// applyErr is a failure of an apply step; the round retries.
	applyErr error
	// statefulSet is the live StatefulSet, nil until it exists (or while
	// the one of its name is not this MessagingBridge's).
	statefulSet *appsv1.StatefulSet
	// scaleErr is why a suspended bridge's StatefulSet could not be
	// scaled to zero.
	scaleErr error
	// rolloutWaiting says why the bridge keeps its image for now.
	rolloutWaiting string
	// reobserving: the round only re-observes the bridge for a newly
	// elected leader (see resume.go), with no apply step before it.
	reobserving bool
}

// setCondition records c for the current generation; meta.SetStatusCondition
// keeps the transition time of a condition whose status did not change.
func (rd *round) setCondition(c metav1.Condition) {
	c.ObservedGeneration = rd.mb.Generation
	meta.SetStatusCondition(&rd.status.Conditions, c)
}

// step is one stage of the pipeline. It returns done=true to end the apply
// stages early (the observation and status write still run) and an error
// the round should be retried for.
type step func(ctx context.Context, rd *round) (done bool, err error)

// Reconcile runs the pipeline: finalizer bookkeeping, then Secrets, Service,
// StatefulSet in order, each returning early on a blocker, then the
// observation of the bridge, which always runs so that the status never
// shows a stale session. The status is written only when it changed.
func (r *MessagingBridgeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.resume.wait(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var mb msgbridgev1alpha1.MessagingBridge
	if err := r.Get(ctx, req.NamespacedName, &mb); err != nil {
		if client.IgnoreNotFound(err) == nil {
			forgetMetrics(req.Namespace, req.Name)
			r.events.forget(req.NamespacedName)
			r.statuses.forget(req.NamespacedName)
			r.subscriptions.forget(req.NamespacedName)
			r.apiKeys.forget(req.NamespacedName)
		}
		// Deleted since the event was queued: nothing is left to reconcile.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mb.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &mb)
	}
	if err := r.reconcileFinalizer(ctx, &mb); err != nil {
		return ctrl.Result{}, err
	}

	r.statuses.catchUp(&mb)
	rd := &round{mb: &mb, status: *mb.Status.DeepCopy()}
	var stepErr error
	for _, s := range []step{r.reconcileGeneratedSecret, r.resolveCredentials, r.reconcileService, r.reconcileStatefulSet, r.reconcileDisruptionBudget} {
		done, err := s(ctx, rd)
		if err != nil {
			rd.applyErr = err
			stepErr = err
			break
		}
		if done {
			break
		}
	}
	r.recordReconciled(rd)
	if err := r.holdSuspended(ctx, rd); err != nil {
		return ctrl.Result{}, errors.Join(stepErr, err)
	}
	// A refused scale-down is reported in Available and retried.
	stepErr = errors.Join(stepErr, rd.scaleErr)
	if err := r.observe(ctx, rd); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, rd); err != nil {
		return ctrl.Result{}, errors.Join(stepErr, err)
	}
	// A transient failure retries with the controller's back-off; a
	// blocker waits for a human (whose change starts a round) and is
	// looked at again every poll, suspended or not.
	if stepErr != nil {
		return ctrl.Result{}, stepErr
	}
	return ctrl.Result{RequeueAfter: r.nextPoll(&mb, rd.blocker != nil)}, nil
}

// recordReconciled sets Reconciled and Stalled from what the apply steps met.
func (r *MessagingBridgeReconciler) recordReconciled(rd *round) {
	rd.setCondition(conditions.Reconciled(rd.blocker, rd.applyErr))
	rd.setCondition(conditions.Stalled(rd.blocker))
	rd.status.Endpoint = specs.Endpoint(rd.mb)
}

// nextPoll spreads polls by up to a tenth of the interval, so that bridges
// created together do not poll together forever. A suspended bridge has
// nothing to poll, unless it is stalled: a spec change wakes it.
func (r *MessagingBridgeReconciler) nextPoll(mb *msgbridgev1alpha1.MessagingBridge, stalled bool) time.Duration {
	if mb.Spec.Suspend && !stalled {
		return 0
	}
	interval := r.PollInterval
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	return interval + rand.N(interval/10+1) //nolint:gosec // jitter, not a secret
}

func (r *MessagingBridgeReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *MessagingBridgeReconciler) bridgeURL(mb *msgbridgev1alpha1.MessagingBridge) string {
	if r.BridgeURL != nil {
		return r.BridgeURL(mb)
	}
	return specs.Endpoint(mb)
}

func (r *MessagingBridgeReconciler) event(mb *msgbridgev1alpha1.MessagingBridge, eventType, reason, action, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(mb, nil, eventType, reason, action, "%s", note)
	}
}
