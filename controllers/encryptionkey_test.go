package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// Issue 18.4: once a bridge was handed its generated encryption key, a
// deleted generated Secret is not silently recreated with a new key (the
// bridge would then fail on its data): the resource stalls with
// EncryptionKeyLost and one Warning, until the user resets on purpose.
func TestLostGeneratedEncryptionKeyStalls(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	create(t, mb)
	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	key := client.ObjectKey{Namespace: ns, Name: "sales-generated"}
	var generated corev1.Secret
	getObject(t, key, &generated)
	old := specs.KeyFingerprint(generated.Data[specs.GeneratedEncryptionKey])
	eventually(t, 10*time.Second, func() (bool, string) {
		getObject(t, client.ObjectKeyFromObject(mb), got)
		return got.Status.EncryptionKeyFingerprint == old, "fingerprint " + got.Status.EncryptionKeyFingerprint + ", want " + old
	})

	if err := k8sClient.Delete(context.Background(), &generated); err != nil {
		t.Fatal(err)
	}
	stalled := waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonEncryptionKeyLost)
	msg := conditionMessage(stalled, msgbridgev1alpha1.ConditionStalled)
	for _, want := range []string{old, "data-sales-0", msgbridgev1alpha1.ResetEncryptionKeyAnnotation} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stalled message %q does not say %q", msg, want)
		}
	}
	expectOneEvent(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonEncryptionKeyLost)
	if getObject(t, key, &corev1.Secret{}) {
		t.Fatal("the generated Secret was recreated with a new encryption key")
	}

	// The deliberate reset: a new key, recorded, and the annotation gone.
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Annotations = map[string]string{msgbridgev1alpha1.ResetEncryptionKeyAnnotation: "true"}
	})
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionFalse, conditions.ReasonNotStalled)
	waitEvent(t, ns, "sales", corev1.EventTypeNormal, "EncryptionKeyReset")
	eventually(t, 10*time.Second, func() (bool, string) {
		var fresh corev1.Secret
		if !getObject(t, key, &fresh) {
			return false, "generated Secret not recreated"
		}
		getObject(t, client.ObjectKeyFromObject(mb), got)
		now := specs.KeyFingerprint(fresh.Data[specs.GeneratedEncryptionKey])
		_, annotated := got.Annotations[msgbridgev1alpha1.ResetEncryptionKeyAnnotation]
		return now != old && got.Status.EncryptionKeyFingerprint == now && !annotated,
			"new key not recorded, or the reset annotation is still there"
	})
}

// Issue 18.4: a referenced key replaced by another value stalls too, and
// putting the old key back recovers without a reset.
func TestReplacedEncryptionKeyStalls(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridgeWithKeys(t, ns, "sales")
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	eventually(t, 10*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(mb), &got)
		return got.Status.EncryptionKeyFingerprint != "", "no fingerprint recorded"
	})
	sts := waitStatefulSet(t, mb, anyStatefulSet)

	setSecretKey(t, ns, "sales-keys", "encryptionKey", strings.Repeat("cd", 32))
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonEncryptionKeyLost)
	if now := waitStatefulSet(t, mb, anyStatefulSet); now.Generation != sts.Generation {
		t.Error("the StatefulSet was rolled onto a key its data is not encrypted with")
	}
	setSecretKey(t, ns, "sales-keys", "encryptionKey", strings.Repeat("AB", 32)) // the same key, as the bridge reads it
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionFalse, conditions.ReasonNotStalled)
}
