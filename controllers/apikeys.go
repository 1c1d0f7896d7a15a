package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

// keySourceResource is the bridge's source of the keys the operator puts.
const keySourceResource = "resource"

// reconcileAPIKeys puts spec.apiKeys into the bridge through its admin API,
// each with the secret its Secret holds, and revokes the resource's keys
// the spec no longer names (never a key made by hand). It runs for a bridge
// that has keys in its spec or had some put this operator's life. A key
// whose Secret is missing is left as the bridge holds it and logged: a
// Secret deleted by mistake must not cut an assistant off mid-work (delete
// the key from the spec to revoke it). Failures are retried next poll.
func (r *MessagingBridgeReconciler) reconcileAPIKeys(ctx context.Context, rd *round, unreachable string) {
	key := client.ObjectKeyFromObject(rd.mb)
	if unreachable != "" || (len(rd.mb.Spec.APIKeys) == 0 && !r.apiKeys.any(key)) {
		return
	}
	if err := r.syncAPIKeys(ctx, rd); err != nil {
		log.FromContext(ctx).Info("api keys not synced; retried next poll", "reason", err.Error())
	}
}

func (r *MessagingBridgeReconciler) syncAPIKeys(ctx context.Context, rd *round) error {
	token, err := r.roundAdminToken(ctx, rd)
	if err != nil {
		return err
	}
	base, key := r.bridgeURL(rd.mb), client.ObjectKeyFromObject(rd.mb)
	held, err := r.bridge().Keys(ctx, base, token)
	if err != nil {
		return fmt.Errorf("reading the keys: %w", err)
	}
	named := map[string]bool{}
	for _, k := range rd.mb.Spec.APIKeys {
		named[k.Name] = true
		rendered, invalid, err := r.renderAPIKey(ctx, rd.mb, k)
		if err != nil {
			return err
		}
		if invalid != "" {
			log.FromContext(ctx).Info("api key not put", "key", k.Name, "reason", invalid)
			continue
		}
		digest := apiKeyDigest(rendered)
		if heldKey(held, k.Name) && r.apiKeys.applied(key, k.Name) == digest {
			continue
		}
		if err := r.bridge().PutKey(ctx, base, token, rendered); err != nil {
			return fmt.Errorf("putting key %s: %w", k.Name, err)
		}
		r.apiKeys.record(key, k.Name, digest)
	}
	for _, h := range held {
		if h.Source != keySourceResource || named[h.Name] {
			continue
		}
		if err := r.bridge().DeleteKey(ctx, base, token, h.Name); err != nil {
			return fmt.Errorf("revoking key %s: %w", h.Name, err)
		}
		r.apiKeys.record(key, h.Name, "")
		log.FromContext(ctx).Info("revoked an api key the spec no longer names", "key", h.Name)
	}
	return nil
}

func heldKey(held []contract.APIKeyView, name string) bool {
	for _, h := range held {
		if h.Name == name && h.Source == keySourceResource {
			return true
		}
	}
	return false
}

// renderAPIKey is the bridge's body of k with the secret of its Secret;
// invalid says what is missing (never a value).
func (r *MessagingBridgeReconciler) renderAPIKey(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge, k msgbridgev1alpha1.APIKeySpec) (contract.APIKey, string, error) {
	data, invalid, err := r.subscriptionSecret(ctx, mb, k.SecretRef.Name)
	if invalid != "" || err != nil {
		return contract.APIKey{}, invalid, err
	}
	secret, ok := data[k.SecretRef.Key]
	if !ok {
		return contract.APIKey{}, fmt.Sprintf("Secret %s has no key %q", k.SecretRef.Name, k.SecretRef.Key), nil
	}
	out := contract.APIKey{Name: k.Name, Chats: k.Chats, Budget: int(k.Budget), Approval: k.Approval, Key: string(secret)}
	for _, s := range k.Scopes {
		out.Scopes = append(out.Scopes, string(s))
	}
	if k.ExpiresAt != nil {
		at := k.ExpiresAt.UTC().Format(time.RFC3339)
		out.ExpiresAt = &at
	}
	return out, "", nil
}

// apiKeyDigest identifies what was put; the secret in it is hashed with
// the rest, never kept.
func apiKeyDigest(k contract.APIKey) string {
	b, _ := json.Marshal(k) //nolint:errchkjson // strings, a slice, ints and a bool: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
