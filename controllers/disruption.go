package controllers

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// reconcileDisruptionBudget keeps the bridge's PodDisruptionBudget while
// spec.disruptionBudget.enabled asks for one, guarded as the other owned
// objects are, and deletes the one it made once the spec no longer asks.
func (r *MessagingBridgeReconciler) reconcileDisruptionBudget(ctx context.Context, rd *round) (bool, error) {
	if specs.WantsDisruptionBudget(rd.mb) {
		desired := specs.PodDisruptionBudget(rd.mb)
		var live policyv1.PodDisruptionBudget
		return r.applyOwned(ctx, rd, owned{
			kind: "PodDisruptionBudget", name: *desired.Name, desired: desired, live: &live, conflict: conditions.ReasonPodDisruptionBudgetConflict,
			extract: func() (any, error) { return policyv1ac.ExtractPodDisruptionBudget(&live, FieldOwner) },
		})
	}
	var live policyv1.PodDisruptionBudget
	err := r.Get(ctx, client.ObjectKey{Namespace: rd.mb.Namespace, Name: specs.PodDisruptionBudgetName(rd.mb)}, &live)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	case !metav1.IsControlledBy(&live, rd.mb):
		return false, nil // someone else's: not this operator's to delete
	}
	// The UID precondition deletes this one only, not one made meanwhile.
	err = r.Delete(ctx, &live, client.Preconditions{UID: &live.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("deleting PodDisruptionBudget %s: %w", live.Name, err)
	}
	return false, nil
}
