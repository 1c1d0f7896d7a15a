package controllers

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// reconcileService applies the Service when the fields this operator owns
// differ from the built ones.
func (r *MessagingBridgeReconciler) reconcileService(ctx context.Context, rd *round) (bool, error) {
	desired := specs.Service(rd.mb)
	var live corev1.Service
	return r.applyOwned(ctx, rd, owned{
		kind: "Service", name: *desired.Name, desired: desired, live: &live, conflict: conditions.ReasonServiceConflict,
		extract: func() (any, error) { return corev1ac.ExtractService(&live, FieldOwner) },
	})
}

// reconcileStatefulSet applies the StatefulSet when the fields this operator
// owns differ from the built ones, and keeps the live object for Available.
// Once it holds the credentials, the encryption key counts as in use.
func (r *MessagingBridgeReconciler) reconcileStatefulSet(ctx context.Context, rd *round) (bool, error) {
	desired := specs.StatefulSet(rd.mb, specs.StatefulSetInputs{
		Image:       r.BridgeImage,
		SecretsHash: specs.SecretsHash(rd.credentials),
	})
	var live appsv1.StatefulSet
	done, err := r.applyOwned(ctx, rd, owned{
		kind: "StatefulSet", name: *desired.Name, desired: desired, live: &live, conflict: conditions.ReasonStatefulSetConflict,
		extract: func() (any, error) { return appsv1ac.ExtractStatefulSet(&live, FieldOwner) },
	})
	if done || err != nil {
		return done, err
	}
	if live.Name != "" {
		rd.statefulSet = &live
	}
	return false, r.recordKeyInUse(ctx, rd)
}

// owned is one object the operator applies for a MessagingBridge.
type owned struct {
	kind, name string
	desired    runtime.ApplyConfiguration
	// live receives the object of the desired name, if there is one.
	live client.Object
	// conflict is the Stalled reason when live is not controlled by the
	// MessagingBridge.
	conflict string
	// extract returns what FieldOwner owns of live.
	extract func() (any, error)
}

// applyOwned applies o.desired, guarded: an existing object of that name
// that this MessagingBridge does not control is someone else's, and is
// never changed (applying would rewrite its fields and make the bridge its
// owner, so that deleting the bridge deleted it); the round stalls until it
// goes away. A refusal that retrying cannot cure stalls too.
func (r *MessagingBridgeReconciler) applyOwned(ctx context.Context, rd *round, o owned) (bool, error) {
	name := o.name
	getErr := r.Get(ctx, client.ObjectKey{Namespace: rd.mb.Namespace, Name: name}, o.live)
	if getErr == nil && !metav1.IsControlledBy(o.live, rd.mb) {
		rd.blocker = &conditions.Blocker{Reason: o.conflict, Message: fmt.Sprintf(
			"%s %s exists and is not controlled by this MessagingBridge; the operator will not take it over: "+
				"delete or rename it, or give the MessagingBridge another name", o.kind, name)}
		return true, nil
	}
	err := r.applyIfChanged(ctx, o.desired, getErr, o.extract)
	if err == nil {
		return false, nil
	}
	if permanentAPIError(err) {
		rd.blocker = &conditions.Blocker{Reason: conditions.ReasonApplyRejected, Message: fmt.Sprintf(
			"the API server refused %s %s; fix the MessagingBridge's spec (or what refuses it): %v", o.kind, name, err)}
		return true, nil
	}
	return false, fmt.Errorf("applying %s %s: %w", o.kind, name, err)
}

// permanentAPIError reports a refusal that the same request would meet
// again: validation (422), a malformed request (400), or an admission or
// authorization refusal (403), except an exceeded quota, which frees up by
// itself.
func permanentAPIError(err error) bool {
	switch {
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return true
	case apierrors.IsForbidden(err):
		return !strings.Contains(err.Error(), "exceeded quota")
	}
	return false
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
