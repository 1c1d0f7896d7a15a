package specs

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// PodDisruptionBudgetName is the name of mb's PodDisruptionBudget.
func PodDisruptionBudgetName(mb *msgbridgev1alpha1.MessagingBridge) string { return mb.Name }

// WantsDisruptionBudget reports whether mb asks for a PodDisruptionBudget.
func WantsDisruptionBudget(mb *msgbridgev1alpha1.MessagingBridge) bool {
	return mb.Spec.DisruptionBudget != nil && mb.Spec.DisruptionBudget.Enabled
}

// PodDisruptionBudget keeps mb's one pod from voluntary evictions while it
// is ready (minAvailable 1 of one pod); a pod that is not ready may always
// be evicted, so that a broken bridge never holds up a node's drain.
func PodDisruptionBudget(mb *msgbridgev1alpha1.MessagingBridge) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	return policyv1ac.PodDisruptionBudget(PodDisruptionBudgetName(mb), mb.Namespace).
		WithLabels(Labels(mb)).
		WithOwnerReferences(ownerReference(mb)).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMinAvailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(mb))).
			WithUnhealthyPodEvictionPolicy(policyv1.AlwaysAllow))
}
