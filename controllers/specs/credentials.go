package specs

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

// Keys of the generated Secret, one per credential the operator can generate.
const (
	GeneratedAPIKey        = "apiKey"
	GeneratedAdminToken    = "adminToken"
	GeneratedEncryptionKey = "encryptionKey"
	GeneratedWebhookSecret = "webhookSecret"
)

// Credential is one secret setting of the bridge and where its value lives:
// a key of a user's Secret, or of the generated Secret.
type Credential struct {
	// Env is the bridge setting it feeds.
	Env string
	// Source is the Secret key that holds the value.
	Source msgbridgev1alpha1.SecretKeyReference
	// Generated is true when Source is the operator's generated Secret.
	Generated bool
}

// generator makes a fresh value for a credential the user did not reference.
type generator func(random io.Reader) (string, error)

// Credentials lists the secret settings mb's bridge reads, in a fixed order:
// each from the user's reference when there is one, else from the generated
// Secret. WEBHOOK_SECRET is listed only with a webhook, TOTP_SECRET only when
// referenced (it cannot be useful unless the user enrols it in an app).
func Credentials(mb *msgbridgev1alpha1.MessagingBridge) []Credential {
	generated := GeneratedSecretName(mb)
	pick := func(env string, ref *msgbridgev1alpha1.SecretKeyReference, generatedKey string) Credential {
		if ref != nil {
			return Credential{Env: env, Source: *ref}
		}
		return Credential{Env: env, Source: msgbridgev1alpha1.SecretKeyReference{Name: generated, Key: generatedKey}, Generated: true}
	}
	out := []Credential{
		pick(contract.EnvAPIKey, mb.Spec.APIKeySecretRef, GeneratedAPIKey),
		pick(contract.EnvAdminToken, mb.Spec.AdminTokenSecretRef, GeneratedAdminToken),
		pick(contract.EnvEncryptionKey, mb.Spec.EncryptionKeySecretRef, GeneratedEncryptionKey),
	}
	if mb.Spec.Webhook != nil {
		out = append(out, pick(contract.EnvWebhookSecret, mb.Spec.Webhook.SecretRef, GeneratedWebhookSecret))
	}
	if mb.Spec.TOTPSecretRef != nil {
		out = append(out, Credential{Env: contract.EnvTOTPSecret, Source: *mb.Spec.TOTPSecretRef})
	}
	return out
}

// AdminTokenSource is the Secret key the operator reads to call the bridge's
// admin API.
func AdminTokenSource(mb *msgbridgev1alpha1.MessagingBridge) msgbridgev1alpha1.SecretKeyReference {
	return credentialSource(mb, contract.EnvAdminToken).Source
}

// ReferencedSecretNames are the user's Secrets mb reads, without duplicates:
// the keys of the field index that maps a Secret event to the bridges that
// read it.
func ReferencedSecretNames(mb *msgbridgev1alpha1.MessagingBridge) []string {
	var names []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, c := range Credentials(mb) {
		if !c.Generated {
			add(c.Source.Name)
		}
	}
	// A subscription's secret and credentials go through the admin API,
	// not the pod's environment, but their change must reach the bridge as
	// soon.
	for _, s := range mb.Spec.Subscriptions {
		if s.SecretRef != nil {
			add(s.SecretRef.Name)
		}
		if s.CredentialsSecretRef != nil {
			add(s.CredentialsSecretRef.Name)
		}
	}
	return names
}

var generators = map[string]generator{
	// Credentials travel in headers and form fields: URL-safe base64 of 32
	// bytes is 43 printable characters, above the bridge's minimum of 16.
	GeneratedAPIKey:     randomToken,
	GeneratedAdminToken: randomToken,
	// The bridge wants exactly 64 hex characters (32 bytes).
	GeneratedEncryptionKey: func(random io.Reader) (string, error) {
		b, err := randomBytes(random, 32)
		return hex.EncodeToString(b), err
	},
	// Standard Webhooks: whsec_ and the standard base64 of the key.
	GeneratedWebhookSecret: func(random io.Reader) (string, error) {
		b, err := randomBytes(random, 32)
		return "whsec_" + base64.StdEncoding.EncodeToString(b), err
	},
}

func randomToken(random io.Reader) (string, error) {
	b, err := randomBytes(random, 32)
	return base64.RawURLEncoding.EncodeToString(b), err
}

func randomBytes(random io.Reader, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(random, b); err != nil {
		return nil, fmt.Errorf("reading %d random bytes: %w", n, err)
	}
	return b, nil
}

// DefaultRandom is the source of generated credentials in production.
var DefaultRandom io.Reader = rand.Reader

// KeyFingerprint identifies an encryption key without revealing it: the
// first 16 bytes of a domain-separated SHA-256 digest, in hex. The key is
// compared as the bridge reads it, case-insensitively.
func KeyFingerprint(key []byte) string {
	h := sha256.Sum256(append([]byte("msgbridge encryption key\x00"), bytes.ToLower(key)...))
	return hex.EncodeToString(h[:16])
}

// EncryptionKeySource is the Secret key that holds mb's encryption key.
func EncryptionKeySource(mb *msgbridgev1alpha1.MessagingBridge) msgbridgev1alpha1.SecretKeyReference {
	return credentialSource(mb, contract.EnvEncryptionKey).Source
}

// EncryptionKeyGenerated reports whether the operator generates mb's
// encryption key.
func EncryptionKeyGenerated(mb *msgbridgev1alpha1.MessagingBridge) bool {
	return credentialSource(mb, contract.EnvEncryptionKey).Generated
}

func credentialSource(mb *msgbridgev1alpha1.MessagingBridge, env string) Credential {
	for _, c := range Credentials(mb) {
		if c.Env == env {
			return c
		}
	}
	panic("Credentials always lists " + env)
}
