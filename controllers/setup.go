package controllers

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// secretRefsIndex indexes MessagingBridges by the names of the user Secrets
// they reference, so that a Secret event finds its bridges without a scan.
const secretRefsIndex = ".spec.secretRefs" //nolint:gosec // an index name, not a credential

// SetupWithManager registers the reconciler and its watches. opts sets, among
// others, MaxConcurrentReconciles: a reconcile may wait up to 5 s on a bridge.
func (r *MessagingBridgeReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &msgbridgev1alpha1.MessagingBridge{}, secretRefsIndex,
		func(o client.Object) []string {
			return specs.ReferencedSecretNames(o.(*msgbridgev1alpha1.MessagingBridge))
		}); err != nil {
		return err
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	r.resume = newResumeGate()
	if err := mgr.Add(&reobserver{r: r, cache: mgr.GetCache()}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		// The operator's own status writes change neither the generation nor
		// the deletion timestamp, so they start no reconcile. The reset
		// annotation does.
		For(&msgbridgev1alpha1.MessagingBridge{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deletionStarted()))).
		// The StatefulSet and Service carry the bridge's name: mapping by
		// name, not by owner, also wakes a bridge stalled on someone else's
		// object of that name when it goes away. A StatefulSet's status
		// (ready replicas) is what Available reports.
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(sameName)).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(sameName)).
		Watches(&policyv1.PodDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(sameName)).
		// Secrets metadata-only (see secretstore.go): the generated one by
		// its name, and a user Secret a bridge references: its creation
		// ends a SecretNotFound stall at once, its rotation rolls the pod.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.bridgesReadingSecret), builder.OnlyMetadata).
		WithOptions(opts).
		Named("messagingbridge").
		Complete(r)
}

// sameName maps an object to the MessagingBridge of its name, which may not
// exist: that round ends at once.
func sameName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// bridgesReadingSecret maps a Secret to the MessagingBridges of its
// namespace that read it: its generated Secret's owner, or those that
// reference it.
func (r *MessagingBridgeReconciler) bridgesReadingSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	var out []reconcile.Request
	if owner, ok := strings.CutSuffix(secret.GetName(), specs.GeneratedSecretSuffix); ok {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: secret.GetNamespace(), Name: owner}})
	}
	var list msgbridgev1alpha1.MessagingBridgeList
	if err := r.List(ctx, &list, client.InNamespace(secret.GetNamespace()),
		client.MatchingFields{secretRefsIndex: secret.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the MessagingBridges that reference a Secret", "secret", secret.GetName())
		return out
	}
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// deletionStarted passes the update that sets a deletion timestamp: the
// logout finalizer must run although the generation may not move.
func deletionStarted() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
