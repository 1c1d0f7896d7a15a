package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// generatedKeyOf waits until mb recorded the fingerprint of its generated
// encryption key and returns it with the generated Secret.
func generatedKeyOf(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) (string, *corev1.Secret) {
	t.Helper()
	var secret corev1.Secret
	eventually(t, 20*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		if !getObject(t, client.ObjectKeyFromObject(mb), &got) || !getObject(t, client.ObjectKey{Namespace: mb.Namespace, Name: mb.Name + "-generated"}, &secret) {
			return false, "MessagingBridge or generated Secret not found"
		}
		return got.Status.EncryptionKeyFingerprint != "" &&
				got.Status.EncryptionKeyFingerprint == specs.KeyFingerprint(secret.Data[specs.GeneratedEncryptionKey]),
			"fingerprint " + got.Status.EncryptionKeyFingerprint + " not recorded for the generated key"
	})
	return specs.KeyFingerprint(secret.Data[specs.GeneratedEncryptionKey]), &secret
}

// deleteBridge deletes mb and then plays the garbage collector, which
// envtest lacks: it deletes what names mb's UID as an owner, and nothing
// else, as kube-controller-manager would, and goes on doing so until the
// test ends. Once was not enough: a StatefulSet the operator applied for
// the old bridge after that one sweep (a round of it still under way) stayed
// for good, and its successor stalled on StatefulSetConflict, where a real
// cluster's collector deletes such an orphan.
func deleteBridge(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) {
	t.Helper()
	var live msgbridgev1alpha1.MessagingBridge
	getObject(t, client.ObjectKeyFromObject(mb), &live)
	if err := k8sClient.Delete(context.Background(), &live); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		return !getObject(t, client.ObjectKeyFromObject(mb), &msgbridgev1alpha1.MessagingBridge{}), "MessagingBridge not deleted"
	})
	if err := collectOwnedBy(mb.Namespace, live.UID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = collectOwnedBy(mb.Namespace, live.UID) // the next tick tries again
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// collectOwnedBy deletes the StatefulSets, Services and Secrets of namespace
// that name owner among their owners.
func collectOwnedBy(namespace string, owner types.UID) error {
	for _, list := range []client.ObjectList{&appsv1.StatefulSetList{}, &corev1.ServiceList{}, &corev1.SecretList{}} {
		if err := k8sClient.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
			return err
		}
		for _, o := range objectsOf(list) {
			if !slices.ContainsFunc(o.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == owner }) {
				continue
			}
			if err := k8sClient.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

func objectsOf(list client.ObjectList) []client.Object {
	var out []client.Object
	switch l := list.(type) {
	case *appsv1.StatefulSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.ServiceList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.SecretList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// adoptedKey waits until a new MessagingBridge runs on the key of
// fingerprint want, with an Adopted event and without SecretConflict.
func adoptedKey(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, want string) {
	t.Helper()
	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	waitEvent(t, mb.Namespace, mb.Name, corev1.EventTypeNormal, "Adopted")
	if now, _ := generatedKeyOf(t, got); now != want {
		t.Errorf("the new MessagingBridge runs on the key %s, want the kept %s", now, want)
	}
	var secret corev1.Secret
	getObject(t, client.ObjectKey{Namespace: mb.Namespace, Name: mb.Name + "-generated"}, &secret)
	if secret.Annotations[specs.BridgeUIDAnnotation] != string(got.UID) || len(secret.OwnerReferences) != 0 {
		t.Errorf("adopted Secret: annotation %q, owners %v; want the new UID and no owner", secret.Annotations[specs.BridgeUIDAnnotation], secret.OwnerReferences)
	}
	sts := waitStatefulSet(t, got, anyStatefulSet)
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("claim retention %v, want Retain on delete", p)
	}
}

// Issue 32.3: by default, deleting a MessagingBridge keeps its volume claim
// and its generated Secret (the key of that volume's data); a
// MessagingBridge created again under the name adopts the Secret, without
// SecretConflict and without a new key, and its StatefulSet keeps the claim.
func TestRetainedSecretIsAdoptedBySuccessor(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	kept, secret := generatedKeyOf(t, mb)
	if len(secret.OwnerReferences) != 0 {
		t.Errorf("the generated Secret has owners %v: the garbage collector would delete it with the bridge", secret.OwnerReferences)
	}

	deleteBridge(t, mb)
	if !getObject(t, client.ObjectKeyFromObject(secret), &corev1.Secret{}) {
		t.Fatal("the generated Secret went with the MessagingBridge")
	}
	create(t, newBridge(ns, "sales"))
	adoptedKey(t, mb, kept)
}

// Issue 32.3: DeletionPolicy Delete makes the bridge the Secret's owner and
// deletes the claim with the StatefulSet; switching back to Retain undoes
// both.
func TestDeletionPolicyDelete(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	mb.Spec.DeletionPolicy = msgbridgev1alpha1.DeletionPolicyDelete
	create(t, mb)
	live := waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	_, secret := generatedKeyOf(t, mb)
	if !metav1.IsControlledBy(secret, live) {
		t.Errorf("owners %v, want the MessagingBridge", secret.OwnerReferences)
	}
	waitStatefulSet(t, mb, claimDeletedWithIt(true))

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.DeletionPolicy = msgbridgev1alpha1.DeletionPolicyRetain
	})
	waitStatefulSet(t, mb, claimDeletedWithIt(false))
	eventually(t, 20*time.Second, func() (bool, string) {
		getObject(t, client.ObjectKeyFromObject(secret), secret)
		return len(secret.OwnerReferences) == 0, "the retained Secret still has an owner"
	})
}

func claimDeletedWithIt(deleted bool) func(*appsv1.StatefulSet) (bool, string) {
	return func(sts *appsv1.StatefulSet) (bool, string) {
		p := sts.Spec.PersistentVolumeClaimRetentionPolicy
		got := p != nil && p.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		return got == deleted, "claim retention policy not changed yet"
	}
}

// Issue 32.3: the README's backup and restore of one bridge into another
// namespace. The Secret is exported as its data, labels and annotations
// (owner references, UID and resource version stripped, as the README's
// command does), the claim restored as data-<name>-0 beside it, and the
// MessagingBridge applied there under the same name: it adopts the key and
// its StatefulSet's claim template names the restored claim.
func TestRestoreIntoAnotherNamespace(t *testing.T) {
	from, to := testNamespace(t), testNamespace(t)
	startOperator(t, from, operatorOptions{})
	startOperator(t, to, operatorOptions{})
	mb := newBridge(from, "sales")
	mb.Spec.DeletionPolicy = msgbridgev1alpha1.DeletionPolicyDelete // the harder case: the backup names an owner
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	kept, secret := generatedKeyOf(t, mb)

	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: to, Name: secret.Name, Labels: secret.Labels, Annotations: secret.Annotations},
		Type:       secret.Type,
		Data:       secret.Data,
	})
	restored := newBridge(to, "sales")
	create(t, restored)
	adoptedKey(t, restored, kept)
	sts := waitStatefulSet(t, restored, anyStatefulSet)
	claim := types.NamespacedName{Namespace: to, Name: "data-sales-0"} // the README names it
	if name := sts.Spec.VolumeClaimTemplates[0].Name + "-" + sts.Name + "-0"; name != claim.Name {
		t.Errorf("the StatefulSet would create claim %s, not reuse the restored %s", name, claim.Name)
	}
}
