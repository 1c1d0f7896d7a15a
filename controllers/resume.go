package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// reobserveWorkers bounds the bridges re-observed at once when a replica
// starts to lead. Each waits at most half a heartbeat interval on its
// bridge, so that the first pass over a fleet ends within about one
// heartbeat interval (for up to reobserveWorkers unreachable bridges per
// half interval).
const reobserveWorkers = 64

// resumeGate makes the rounds of a newly elected leader wait until it has
// re-observed every bridge. The statuses it finds were written by a leader
// that may have been gone for minutes (a drain, a lost node): they may say
// Ready for bridges whose pods are gone. A full round spends up to the
// bridge timeout per unreachable bridge, a few at a time, so a fleet's
// statuses would stay false for many heartbeats; the re-observation only
// reads each StatefulSet and session, all at once, with a short deadline.
type resumeGate struct {
	once sync.Once
	done chan struct{}
}

func newResumeGate() *resumeGate { return &resumeGate{done: make(chan struct{})} }

func (g *resumeGate) open() { g.once.Do(func() { close(g.done) }) }

// wait returns once the gate is open, or ctx's error; a nil gate (a
// reconciler not set up with a manager) is open.
func (g *resumeGate) wait(ctx context.Context) error {
	if g == nil {
		return nil
	}
	select {
	case <-g.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reobserver is the manager runnable that re-observes every bridge once
// this replica leads; the MessagingBridge controller's rounds wait for it.
type reobserver struct {
	r     *MessagingBridgeReconciler
	cache interface {
		WaitForCacheSync(ctx context.Context) bool
	}
}

var _ manager.LeaderElectionRunnable = (*reobserver)(nil)

// NeedLeaderElection: only the leader writes statuses.
func (*reobserver) NeedLeaderElection() bool { return true }

func (o *reobserver) Start(ctx context.Context) error {
	defer o.r.resume.open()
	if !o.cache.WaitForCacheSync(ctx) {
		return nil // stopping
	}
	start := time.Now()
	count := o.r.reobserveAll(ctx)
	ctrl.LoggerFrom(ctx).WithName("resume").Info("re-observed every bridge before reconciling",
		"bridges", count, "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// reobserveAll re-observes every MessagingBridge the cache holds, with
// reobserveWorkers at once, and returns how many it looked at.
func (r *MessagingBridgeReconciler) reobserveAll(ctx context.Context) int {
	var list msgbridgev1alpha1.MessagingBridgeList
	if err := r.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the MessagingBridges to re-observe; the rounds will")
		return 0
	}
	work := make(chan *msgbridgev1alpha1.MessagingBridge)
	var wg sync.WaitGroup
	for range min(reobserveWorkers, len(list.Items)) {
		wg.Go(func() {
			for mb := range work {
				if err := r.reobserve(ctx, mb); err != nil {
					ctrl.LoggerFrom(ctx).Info("re-observing a bridge failed; its round will retry",
						"namespace", mb.Namespace, "name", mb.Name, "error", err.Error())
				}
			}
		})
	}
	for i := range list.Items {
		work <- &list.Items[i]
	}
	close(work)
	wg.Wait()
	return len(list.Items)
}

// reobserve refreshes what mb's status says of its pod and session (the
// observation of a round, without the apply steps, the subscriptions and
// the Stalled condition, which the bridge's first round brings), waiting
// at most half a heartbeat interval on the bridge. A resource whose spec
// moved on since its status was written reads as not yet observed
// (Progressing, InProgress) already; its round comes soon.
func (r *MessagingBridgeReconciler) reobserve(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge) error {
	if !mb.DeletionTimestamp.IsZero() || mb.Status.ObservedGeneration < mb.Generation ||
		meta.FindStatusCondition(mb.Status.Conditions, msgbridgev1alpha1.ConditionReconciled) == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, specs.HeartbeatInterval(mb)/2)
	defer cancel()
	r.statuses.catchUp(mb)
	rd := &round{mb: mb, status: *mb.Status.DeepCopy(), reobserving: true}
	if err := r.observe(ctx, rd); err != nil {
		return err
	}
	return r.writeStatus(context.WithoutCancel(ctx), rd)
}
