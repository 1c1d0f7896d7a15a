package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
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
	image, started, err := r.bridgeImage(ctx, rd)
	if err != nil {
		return false, err
	}
	desired := specs.StatefulSet(rd.mb, specs.StatefulSetInputs{
		Image:          image,
		SecretsHash:    specs.SecretsHash(rd.credentials),
		RolloutStarted: started,
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

// holdSuspended scales a suspended bridge's StatefulSet to zero when the
// apply steps stopped before applying it: a stall (a lost encryption key, a
// refused apply) or a failed step must not keep running a bridge the user
// suspended. Only replicas are patched; the rest of the StatefulSet waits for
// the blocker to go. A refusal is kept for the Available condition, which
// then says that the suspend did not happen.
func (r *MessagingBridgeReconciler) holdSuspended(ctx context.Context, rd *round) error {
	if !rd.mb.Spec.Suspend {
		return nil
	}
	if err := r.readStatefulSet(ctx, rd); err != nil {
		return err
	}
	sts := rd.statefulSet
	if sts == nil || (sts.Spec.Replicas != nil && *sts.Spec.Replicas == 0) {
		return nil
	}
	before := sts.DeepCopy()
	sts.Spec.Replicas = ptr.To(int32(0))
	// A merge patch, not an apply: an apply of replicas alone would give
	// up every other field this operator applied.
	if err := r.Patch(ctx, sts, client.MergeFrom(before), client.FieldOwner(FieldOwner)); err != nil {
		rd.statefulSet = before
		rd.scaleErr = fmt.Errorf("patching the replicas of StatefulSet %s: %w", sts.Name, err)
	}
	return nil
}

// readStatefulSet reads the live StatefulSet into rd unless a step already
// did. One of the bridge's name that this MessagingBridge does not control
// is someone else's (StatefulSetConflict): it says nothing about the bridge.
func (r *MessagingBridgeReconciler) readStatefulSet(ctx context.Context, rd *round) error {
	if rd.statefulSet != nil {
		return nil
	}
	var sts appsv1.StatefulSet
	err := r.Get(ctx, client.ObjectKey{Namespace: rd.mb.Namespace, Name: specs.StatefulSetName(rd.mb)}, &sts)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case metav1.IsControlledBy(&sts, rd.mb):
		rd.statefulSet = &sts
	}
	return nil
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
	key := client.ObjectKey{Namespace: rd.mb.Namespace, Name: name}
	getErr := r.Get(ctx, key, o.live)
	if apierrors.IsNotFound(getErr) {
		// The cache may not show yet an object someone created a moment
		// ago; a forced apply would then take it over. An object is
		// missing only until it is created: confirm the absence live.
		getErr = r.apiReader().Get(ctx, key, o.live)
	}
	if getErr == nil && !metav1.IsControlledBy(o.live, rd.mb) {
		rd.blocker = &conditions.Blocker{Reason: o.conflict, Message: fmt.Sprintf(
			"%s %s exists and is not controlled by this MessagingBridge; the operator will not take it over: "+
				"delete or rename it, or give the MessagingBridge another name", o.kind, name)}
		return true, nil
	}
	applied, err := r.applyIfChanged(ctx, o.desired, getErr, o.extract)
	if err == nil && applied {
		// The apply answered with the object as it now is; the live one
		// read before it (and the cache) still shows the old spec.
		return false, liveFromApplied(o.desired, o.live)
	}
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
// DeepDerivative reads a key desired leaves out of a map as unset, so an
// annotation or label the operator stops setting (the roll-out mark once a
// bridge is connected on its new image) would count as no change and stay
// for ever: the metadata maps are compared exactly (sameOwnedMetadata).
//
// Limit: another field a newer operator no longer sets stays until the next
// real change of the object is applied.
func (r *MessagingBridgeReconciler) applyIfChanged(ctx context.Context, desired runtime.ApplyConfiguration, getErr error, extract func() (any, error)) (applied bool, err error) {
	switch {
	case apierrors.IsNotFound(getErr):
	case getErr != nil:
		return false, getErr
	default:
		owned, err := extract()
		if err != nil {
			return false, err
		}
		same, err := sameOwnedMetadata(desired, owned)
		if err != nil {
			return false, err
		}
		if same && equality.Semantic.DeepDerivative(desired, owned) {
			return false, nil
		}
	}
	return true, r.Apply(ctx, desired, client.FieldOwner(FieldOwner), client.ForceOwnership)
}

// metadataMaps are the maps whose keys the operator adds and removes:
// the object's and its pod template's annotations and labels.
var metadataMaps = [][]string{
	{"metadata", "annotations"}, {"metadata", "labels"},
	{"spec", "template", "metadata", "annotations"}, {"spec", "template", "metadata", "labels"},
}

// sameOwnedMetadata reports whether desired and owned (what FieldOwner owns
// of the live object) hold exactly the same metadataMaps: a key owned but no
// longer desired is a change, which the apply removes.
func sameOwnedMetadata(desired runtime.ApplyConfiguration, owned any) (bool, error) {
	d, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return false, err
	}
	o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(owned)
	if err != nil {
		return false, err
	}
	for _, path := range metadataMaps {
		want, _, _ := unstructured.NestedStringMap(d, path...)
		have, _, _ := unstructured.NestedStringMap(o, path...)
		if !maps.Equal(want, have) {
			return false, nil
		}
	}
	return true, nil
}

// liveFromApplied replaces live with the object an apply answered, which
// controller-runtime decodes into the apply configuration.
func liveFromApplied(applied runtime.ApplyConfiguration, live client.Object) error {
	b, err := json.Marshal(applied)
	if err != nil {
		return err
	}
	reflect.ValueOf(live).Elem().SetZero()
	return json.Unmarshal(b, live)
}
