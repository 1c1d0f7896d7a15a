package specs

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// Issue 32.3: which Secret of the generated name is the bridge's own, which
// is kept from an earlier MessagingBridge of that name (adopted), and which
// is a user's (SecretConflict).
func TestSecretOwnership(t *testing.T) {
	mb := bridge(nil)
	earlier := bridge(func(mb *msgbridgev1alpha1.MessagingBridge) { mb.UID = "earlier-uid" })
	deleting := bridge(func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.DeletionPolicy = msgbridgev1alpha1.DeletionPolicyDelete
	})
	other := bridge(func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Name, mb.UID = "support", "support-uid" })
	yes := true
	foreignController := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "sales", UID: "d", Controller: &yes}
	cases := []struct {
		name   string
		secret *metav1.ObjectMeta
		want   Ownership
	}{
		{"created for it, retained", &GeneratedSecret(mb, nil).ObjectMeta, Owned},
		{"created for it, deleted with it", &GeneratedSecret(deleting, nil).ObjectMeta, Owned},
		{"kept from an earlier bridge", &GeneratedSecret(earlier, nil).ObjectMeta, Kept},
		{"restored with the old owner reference", &GeneratedSecret(bridge(func(m *msgbridgev1alpha1.MessagingBridge) {
			m.UID, m.Spec.DeletionPolicy = "earlier-uid", msgbridgev1alpha1.DeletionPolicyDelete
		}), nil).ObjectMeta, Kept},
		{"restored without annotations", &metav1.ObjectMeta{Labels: Labels(mb)}, Kept},
		{"another bridge's", &GeneratedSecret(other, nil).ObjectMeta, Foreign},
		{"a user's of that name", &metav1.ObjectMeta{Name: "sales-generated"}, Foreign},
		{"controlled by something else", &metav1.ObjectMeta{Labels: Labels(mb), OwnerReferences: []metav1.OwnerReference{foreignController}}, Foreign},
	}
	for _, tc := range cases {
		if got := SecretOwnership(tc.secret, mb); got != tc.want {
			t.Errorf("%s: ownership %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Issue 32.3: Retain leaves the Secret without an owner reference, which
// the garbage collector would follow; Delete makes the bridge its
// controller; switching either way keeps other owners.
func TestGeneratedSecretOwners(t *testing.T) {
	mb := bridge(nil)
	if refs := GeneratedSecret(mb, nil).OwnerReferences; len(refs) != 0 {
		t.Errorf("a retained Secret has owners %v", refs)
	}
	deleting := bridge(func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.DeletionPolicy = msgbridgev1alpha1.DeletionPolicyDelete
	})
	s := GeneratedSecret(deleting, nil)
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != mb.UID {
		t.Fatalf("owners %v, want the MessagingBridge", s.OwnerReferences)
	}
	if !GeneratedSecretMetadataCurrent(s, deleting) || GeneratedSecretMetadataCurrent(s, mb) {
		t.Error("a policy switch does not show as metadata to change")
	}
	s.OwnerReferences = append(s.OwnerReferences, metav1.OwnerReference{Kind: "Backup", Name: "nightly", UID: "b"})
	if refs := GeneratedSecretOwners(s, mb); len(refs) != 1 || refs[0].Kind != "Backup" {
		t.Errorf("owners after switching to Retain %v, want only the Backup", refs)
	}
	if ClaimRetention(mb) != "Retain" || ClaimRetention(deleting) != "Delete" {
		t.Error("the claim's retention does not follow the deletion policy")
	}
}
