// Package controllers reconciles MessagingBridge resources.
package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// FieldOwner names this operator in managed fields and Server-Side Apply.
const FieldOwner = "msgbridge-operator"

// MessagingBridgeReconciler turns a MessagingBridge into the objects that run
// its bridge. This first version records which generation it has observed;
// the operator issue adds the StatefulSet, Service, Secrets and session status.
type MessagingBridgeReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=msgbridge.io,resources=messagingbridges,verbs=get;list;watch
// +kubebuilder:rbac:groups=msgbridge.io,resources=messagingbridges/status,verbs=get;update;patch

// Reconcile brings one MessagingBridge's status up to its current generation.
func (r *MessagingBridgeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var mb msgbridgev1alpha1.MessagingBridge
	if err := r.Get(ctx, req.NamespacedName, &mb); err != nil {
		// Deleted since the event was queued: nothing is left to reconcile.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if mb.Status.ObservedGeneration == mb.Generation {
		return ctrl.Result{}, nil // status is written only when it changes
	}
	// A plain merge patch, without the resourceVersion: if the spec moved on
	// meanwhile, recording the generation read is still true, and the new
	// generation's event reconciles again.
	patch := client.MergeFrom(mb.DeepCopy())
	mb.Status.ObservedGeneration = mb.Generation
	if err := r.Status().Patch(ctx, &mb, patch, client.FieldOwner(FieldOwner)); err != nil {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).V(1).Info("observed generation", "generation", mb.Generation)
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler. Only spec changes (a new
// generation) trigger it, so its own status writes cause no loop.
func (r *MessagingBridgeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&msgbridgev1alpha1.MessagingBridge{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("messagingbridge").
		Complete(r)
}
