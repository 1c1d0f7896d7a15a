package controllers

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// reconcileGeneratedSecret creates the generated Secret, or adds the keys it
// lacks. It never rewrites a key: the encryption key in it may already
// encrypt a bridge's databases, and once a bridge was handed that key it is
// not generated again either (see keyLost). A Secret of that name that this
// MessagingBridge does not control is a user's: it is neither adopted nor
// touched, and the round stalls.
func (r *MessagingBridgeReconciler) reconcileGeneratedSecret(ctx context.Context, rd *round) (bool, error) {
	mb := rd.mb
	if !specs.NeedsGeneratedSecret(mb) {
		return false, nil
	}
	key := types.NamespacedName{Namespace: mb.Namespace, Name: specs.GeneratedSecretName(mb)}
	m, err := r.secretMetadata(ctx, key)
	switch {
	case apierrors.IsNotFound(err):
		return r.createGeneratedSecret(ctx, rd)
	case err != nil:
		return false, err
	}
	ownership := specs.SecretOwnership(m, mb)
	if ownership == specs.Foreign {
		rd.blocker = &conditions.Blocker{Reason: conditions.ReasonSecretConflict, Message: fmt.Sprintf(
			"Secret %s exists and is not controlled by this MessagingBridge; the operator will not adopt or change it: rename it, or reference its keys in the spec", key.Name)}
		return true, nil
	}
	secret, err := r.readSecret(ctx, key)
	if err != nil {
		return false, err
	}
	if _, ok := secret.Data[specs.GeneratedEncryptionKey]; !ok && rd.keyLost("", "key "+specs.GeneratedEncryptionKey+" of Secret "+key.Name+" is missing") {
		return true, nil
	}
	if err := r.updateGeneratedSecret(ctx, rd, secret); err != nil {
		return false, err
	}
	if ownership == specs.Kept {
		r.event(mb, corev1.EventTypeNormal, "Adopted", "Reconcile", fmt.Sprintf(
			"adopted the Secret %s kept from an earlier MessagingBridge %s (encryption key fingerprint %s); the StatefulSet reuses the volume claim %s if it exists",
			key.Name, mb.Name, specs.KeyFingerprint(secret.Data[specs.GeneratedEncryptionKey]), specs.ClaimName(mb)))
	}
	rd.generated = secret
	return false, nil
}

// updateGeneratedSecret adds the keys the generated Secret lacks and gives
// it the owner references and annotation of mb's deletion policy: adopting
// a kept Secret, or switching the policy, is such a metadata change.
func (r *MessagingBridgeReconciler) updateGeneratedSecret(ctx context.Context, rd *round, secret *corev1.Secret) error {
	mb := rd.mb
	data, added, err := specs.GeneratedSecretData(mb, secret.Data, r.random())
	if err != nil {
		return err
	}
	if len(added) == 0 && specs.GeneratedSecretMetadataCurrent(secret, mb) {
		return nil
	}
	// The optimistic lock makes a stale read fail instead of dropping
	// a key another round added meanwhile.
	patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
	secret.Data = data
	secret.OwnerReferences = specs.GeneratedSecretOwners(secret, mb)
	secret.Labels = maps.Clone(secret.Labels)
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	maps.Copy(secret.Labels, specs.Labels(mb))
	secret.Annotations = maps.Clone(secret.Annotations)
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[specs.BridgeUIDAnnotation] = string(mb.UID)
	if err := r.Patch(ctx, secret, patch, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("updating Secret %s (adding %v): %w", secret.Name, added, err)
	}
	return nil
}

func (r *MessagingBridgeReconciler) createGeneratedSecret(ctx context.Context, rd *round) (bool, error) {
	mb := rd.mb
	if rd.keyLost("", "Secret "+specs.GeneratedSecretName(mb)+" was deleted") {
		return true, nil
	}
	data, _, err := specs.GeneratedSecretData(mb, nil, r.random())
	if err != nil {
		return false, err
	}
	created := specs.GeneratedSecret(mb, data)
	// Create, not apply: if the cache is behind and the Secret exists,
	// this fails with AlreadyExists instead of replacing its keys.
	if err := r.Create(ctx, created, client.FieldOwner(FieldOwner)); err != nil {
		return false, fmt.Errorf("creating Secret %s: %w", created.Name, err)
	}
	log.FromContext(ctx).Info("generated credentials", "secret", created.Name)
	rd.generated = created
	return false, nil
}

// keyLost stalls the round with EncryptionKeyLost when the bridge was
// handed an encryption key and the key now at hand (fingerprint, "" when
// there is none) is not that one, unless the user asked for a reset. A
// referenced key counts as much as a generated one: the bridge cannot open
// its data with any other.
func (rd *round) keyLost(fingerprint, what string) bool {
	recorded := rd.mb.Status.EncryptionKeyFingerprint
	if recorded == "" || fingerprint == recorded || resetRequested(rd.mb) {
		return false
	}
	if fingerprint == "" && !specs.EncryptionKeyGenerated(rd.mb) {
		return false // a referenced Secret that is missing: SecretNotFound says so
	}
	rd.blocker = &conditions.Blocker{Reason: conditions.ReasonEncryptionKeyLost, Message: fmt.Sprintf(
		"the bridge's data is encrypted with the key of fingerprint %s, but %s; the bridge would not start on its data. "+
			"Restore that key (from a backup of the Secret), or start over on purpose: delete the PersistentVolumeClaim %s-%s-0, "+
			"then annotate the MessagingBridge %s=true", recorded, what, specs.DataVolumeName, specs.StatefulSetName(rd.mb),
		msgbridgev1alpha1.ResetEncryptionKeyAnnotation)}
	return true
}

func resetRequested(mb *msgbridgev1alpha1.MessagingBridge) bool {
	return mb.Annotations[msgbridgev1alpha1.ResetEncryptionKeyAnnotation] == "true"
}

// resolveCredentials reads every credential the bridge will read. A missing
// Secret or key, a value the bridge would refuse, or an encryption key that
// is not the one its data was handed to stalls the round: the pod could not
// start, and applying a StatefulSet with it would only replace a running
// pod with one that cannot start.
func (r *MessagingBridgeReconciler) resolveCredentials(ctx context.Context, rd *round) (bool, error) {
	rd.credentials = map[string][]byte{}
	values := map[string]string{}
	for _, c := range specs.Credentials(rd.mb) {
		secret, err := r.credentialSecret(ctx, rd, c)
		if apierrors.IsNotFound(err) {
			rd.blocker = &conditions.Blocker{Reason: conditions.ReasonSecretNotFound,
				Message: fmt.Sprintf("Secret %s (for %s) not found", c.Source.Name, c.Env)}
			return true, nil
		}
		if err != nil {
			return false, err
		}
		value, ok := secret.Data[c.Source.Key]
		if !ok {
			rd.blocker = &conditions.Blocker{Reason: conditions.ReasonSecretKeyNotFound,
				Message: fmt.Sprintf("Secret %s has no key %q (for %s)", c.Source.Name, c.Source.Key, c.Env)}
			return true, nil
		}
		rd.credentials[c.Env] = value
		values[c.Env] = string(value)
	}
	if err := contract.CheckCredentials(values); err != nil {
		rd.blocker = &conditions.Blocker{Reason: conditions.ReasonInvalidSecret,
			Message: "the bridge would refuse its credentials: " + err.Error()}
		return true, nil //nolint:nilerr // a bad credential is the user's to fix: a Stalled condition, not a retry
	}
	rd.keyFingerprint = specs.KeyFingerprint(rd.credentials[contract.EnvEncryptionKey])
	src := specs.EncryptionKeySource(rd.mb)
	return rd.keyLost(rd.keyFingerprint, fmt.Sprintf("key %s of Secret %s has fingerprint %s", src.Key, src.Name, rd.keyFingerprint)), nil
}

func (r *MessagingBridgeReconciler) credentialSecret(ctx context.Context, rd *round, c specs.Credential) (*corev1.Secret, error) {
	if c.Generated && rd.generated != nil {
		return rd.generated, nil
	}
	return r.readSecret(ctx, types.NamespacedName{Namespace: rd.mb.Namespace, Name: c.Source.Name})
}

// adminToken reads the token the operator sends to mb's bridge, for rounds
// that ran no resolveCredentials (the finalizer).
func (r *MessagingBridgeReconciler) adminToken(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge) (string, error) {
	src := specs.AdminTokenSource(mb)
	secret, err := r.readSecret(ctx, types.NamespacedName{Namespace: mb.Namespace, Name: src.Name})
	if err != nil {
		return "", err
	}
	token, ok := secret.Data[src.Key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %q", src.Name, src.Key)
	}
	return string(token), nil
}

// recordKeyInUse notes the encryption key the StatefulSet now hands to the
// bridge, and ends a reset the user asked for, so that the next loss is
// guarded again.
func (r *MessagingBridgeReconciler) recordKeyInUse(ctx context.Context, rd *round) error {
	rd.status.EncryptionKeyFingerprint = rd.keyFingerprint
	if !resetRequested(rd.mb) {
		return nil
	}
	patch := client.MergeFrom(rd.mb.DeepCopy())
	delete(rd.mb.Annotations, msgbridgev1alpha1.ResetEncryptionKeyAnnotation)
	if err := r.Patch(ctx, rd.mb, patch, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("removing the annotation %s: %w", msgbridgev1alpha1.ResetEncryptionKeyAnnotation, err)
	}
	r.event(rd.mb, corev1.EventTypeNormal, "EncryptionKeyReset", "Reconcile",
		"the bridge now uses the encryption key of fingerprint "+rd.keyFingerprint)
	return nil
}
