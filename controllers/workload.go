package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbridge/msgbridge/controllers/specs"
)

// reconcileService applies the Service when the fields this operator owns
// differ from the built ones.
func (r *MessagingBridgeReconciler) reconcileService(ctx context.Context, rd *round) (bool, error) {
	desired := specs.Service(rd.mb)
	var live corev1.Service
	getErr := r.Get(ctx, client.ObjectKey{Namespace: rd.mb.Namespace, Name: *desired.Name}, &live)
	if err := r.applyIfChanged(ctx, desired, getErr, func() (any, error) {
		return corev1ac.ExtractService(&live, FieldOwner)
	}); err != nil {
		return false, fmt.Errorf("applying Service %s: %w", *desired.Name, err)
	}
	return false, nil
}

// reconcileStatefulSet applies the StatefulSet when the fields this operator
// owns differ from the built ones, and keeps the live object for Available.
func (r *MessagingBridgeReconciler) reconcileStatefulSet(ctx context.Context, rd *round) (bool, error) {
	desired := specs.StatefulSet(rd.mb, specs.StatefulSetInputs{
		Image:       r.BridgeImage,
		SecretsHash: specs.SecretsHash(rd.credentials),
	})
	var live appsv1.StatefulSet
	getErr := r.Get(ctx, client.ObjectKey{Namespace: rd.mb.Namespace, Name: *desired.Name}, &live)
	if err := r.applyIfChanged(ctx, desired, getErr, func() (any, error) {
		return appsv1ac.ExtractStatefulSet(&live, FieldOwner)
	}); err != nil {
		return false, fmt.Errorf("applying StatefulSet %s: %w", *desired.Name, err)
	}
	if getErr == nil {
		rd.statefulSet = &live
	}
	return false, nil
}

// applyIfChanged sends desired with Server-Side Apply unless the live object
// (read with getErr) already holds every field of desired, with its value,
// under FieldOwner. ExtractX returns what FieldOwner owns of the live object;
// DeepDerivative ignores what desired leaves unset, such as the defaults the
// API server filled into the volume claim template. Skipping a no-op apply
// saves one API request per object and poll; a field someone else changed
// is no longer ours in the extract, so the apply forces it back.
//
// Limit: a field a newer operator no longer sets stays until the next real
// change of the object is applied.
func (r *MessagingBridgeReconciler) applyIfChanged(ctx context.Context, desired runtime.ApplyConfiguration, getErr error, extract func() (any, error)) error {
	switch {
	case apierrors.IsNotFound(getErr):
	case getErr != nil:
		return getErr
	default:
		owned, err := extract()
		if err != nil {
			return err
		}
		if equality.Semantic.DeepDerivative(desired, owned) {
			return nil
		}
	}
	return r.Apply(ctx, desired, client.FieldOwner(FieldOwner), client.ForceOwnership)
}
