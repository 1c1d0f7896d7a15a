package specs

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// BridgeUIDAnnotation on the generated Secret names the MessagingBridge that
// holds it now. A retained Secret has no owner reference (which would let
// the garbage collector delete it with its owner, whatever finalizers try
// first), so this annotation is how the operator tells its own Secret from
// one kept from an earlier MessagingBridge of the same name.
const BridgeUIDAnnotation = "msgbridge.io/bridge-uid"

// Ownership is how a generated Secret stands to a MessagingBridge.
type Ownership int

const (
	// Foreign: someone else's Secret, never adopted nor changed.
	Foreign Ownership = iota
	// Kept: the generated Secret of an earlier MessagingBridge of this
	// name, kept on delete or restored from a backup; it is adopted.
	Kept
	// Owned: mb's own.
	Owned
)

// SecretOwnership classifies the Secret of mb's generated name. It is the
// operator's when an owner reference makes a MessagingBridge of mb's name
// its controller, or, without any controller, when it carries the labels
// the operator puts on it; it is mb's own when that MessagingBridge is mb.
// The labels are a deliberate mark: a user's Secret that merely has the
// name still stalls with SecretConflict.
func SecretOwnership(secret metav1.Object, mb *msgbridgev1alpha1.MessagingBridge) Ownership {
	if c := metav1.GetControllerOfNoCopy(secret); c != nil {
		switch {
		case c.Kind != "MessagingBridge" || c.APIVersion != msgbridgev1alpha1.GroupVersion.String() || c.Name != mb.Name:
			return Foreign
		case c.UID == mb.UID:
			return Owned
		}
		return Kept
	}
	labels := secret.GetLabels()
	if labels["app.kubernetes.io/managed-by"] != Labels(mb)["app.kubernetes.io/managed-by"] ||
		labels["app.kubernetes.io/instance"] != mb.Name {
		return Foreign
	}
	if secret.GetAnnotations()[BridgeUIDAnnotation] == string(mb.UID) {
		return Owned
	}
	return Kept
}

// GeneratedSecretOwners are the owner references the generated Secret must
// carry: those of others unchanged, plus mb as its controller only when
// mb's deletion deletes it (DeletionPolicy Delete).
func GeneratedSecretOwners(secret metav1.Object, mb *msgbridgev1alpha1.MessagingBridge) []metav1.OwnerReference {
	out := slices.DeleteFunc(slices.Clone(secret.GetOwnerReferences()), func(r metav1.OwnerReference) bool {
		return r.Controller != nil && *r.Controller
	})
	if !mb.Spec.Retains() {
		out = append(out, generatedSecretOwner(mb))
	}
	return out
}

// GeneratedSecretMetadataCurrent reports whether secret's owner references
// and annotation already are what GeneratedSecretOwners and
// BridgeUIDAnnotation ask for mb.
func GeneratedSecretMetadataCurrent(secret metav1.Object, mb *msgbridgev1alpha1.MessagingBridge) bool {
	return secret.GetAnnotations()[BridgeUIDAnnotation] == string(mb.UID) &&
		slices.EqualFunc(secret.GetOwnerReferences(), GeneratedSecretOwners(secret, mb), func(a, b metav1.OwnerReference) bool {
			return a.UID == b.UID && a.Name == b.Name && a.Kind == b.Kind
		})
}

func generatedSecretOwner(mb *msgbridgev1alpha1.MessagingBridge) metav1.OwnerReference {
	isController := true
	return metav1.OwnerReference{
		APIVersion:         msgbridgev1alpha1.GroupVersion.String(),
		Kind:               "MessagingBridge",
		Name:               mb.Name,
		UID:                mb.UID,
		Controller:         &isController,
		BlockOwnerDeletion: &isController,
	}
}

// ClaimRetention is the StatefulSet's policy for the volume claim when the
// StatefulSet is deleted (with its MessagingBridge): kept unless mb asks for
// Delete. Scaling to zero (suspend) always keeps it.
func ClaimRetention(mb *msgbridgev1alpha1.MessagingBridge) appsv1.PersistentVolumeClaimRetentionPolicyType {
	if mb.Spec.Retains() {
		return appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	return appsv1.DeletePersistentVolumeClaimRetentionPolicyType
}

// ClaimName is the name of the bridge's volume claim, which the StatefulSet
// creates from its template, or reuses when a claim of that name exists
// (kept on delete, or restored from a backup).
func ClaimName(mb *msgbridgev1alpha1.MessagingBridge) string {
	return DataVolumeName + "-" + StatefulSetName(mb) + "-0"
}
