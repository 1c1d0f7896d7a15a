package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// reconcileGeneratedSecret creates the generated Secret, or adds the keys it
// lacks. It never rewrites a key: the encryption key in it may already
// encrypt a bridge's databases. A Secret of that name that this
// MessagingBridge does not control is a user's: it is neither adopted nor
// touched, and the round stalls.
func (r *MessagingBridgeReconciler) reconcileGeneratedSecret(ctx context.Context, rd *round) (bool, error) {
	mb := rd.mb
	if !specs.NeedsGeneratedSecret(mb) {
		return false, nil
	}
	var secret corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: specs.GeneratedSecretName(mb)}, &secret)
	switch {
	case apierrors.IsNotFound(err):
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
	case err != nil:
		return false, err
	}
	if !metav1.IsControlledBy(&secret, mb) {
		rd.blocker = &conditions.Blocker{Reason: conditions.ReasonSecretConflict, Message: fmt.Sprintf(
			"Secret %s exists and is not controlled by this MessagingBridge; the operator will not adopt or change it: rename it, or reference its keys in the spec", secret.Name)}
		return true, nil
	}
	data, added, err := specs.GeneratedSecretData(mb, secret.Data, r.random())
	if err != nil {
		return false, err
	}
	if len(added) > 0 {
		// The optimistic lock makes a stale read fail instead of dropping
		// a key another round added meanwhile.
		patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
		secret.Data = data
		if err := r.Patch(ctx, &secret, patch, client.FieldOwner(FieldOwner)); err != nil {
			return false, fmt.Errorf("adding %v to Secret %s: %w", added, secret.Name, err)
		}
	}
	rd.generated = &secret
	return false, nil
}

// resolveCredentials reads every credential the bridge will read. A missing
// Secret or key stalls the round: the pod could not start, and applying a
// StatefulSet that references it would only replace a running pod with one
// that cannot start.
func (r *MessagingBridgeReconciler) resolveCredentials(ctx context.Context, rd *round) (bool, error) {
	rd.credentials = map[string][]byte{}
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
	}
	return false, nil
}

func (r *MessagingBridgeReconciler) credentialSecret(ctx context.Context, rd *round, c specs.Credential) (*corev1.Secret, error) {
	if c.Generated && rd.generated != nil {
		return rd.generated, nil
	}
	var secret corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: rd.mb.Namespace, Name: c.Source.Name}, &secret)
	return &secret, err
}

// adminToken reads the token the operator sends to mb's bridge, for rounds
// that ran no resolveCredentials (the finalizer).
func (r *MessagingBridgeReconciler) adminToken(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge) (string, error) {
	src := specs.AdminTokenSource(mb)
	var secret corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: src.Name}, &secret); err != nil {
		return "", err
	}
	token, ok := secret.Data[src.Key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %q", src.Name, src.Key)
	}
	return string(token), nil
}
