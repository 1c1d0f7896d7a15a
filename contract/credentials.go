package contract

import (
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Credential formats the bridge accepts at start-up. The operator checks a
// referenced Secret's values with the same functions, so that a value the
// bridge would refuse stalls the resource instead of crash-looping the pod.
const (
	// MinCredentialLen keeps API keys and admin tokens out of guessing range.
	MinCredentialLen = 16
	// EncryptionKeyHexLen is the length of ENCRYPTION_KEY: 32 bytes in hex.
	EncryptionKeyHexLen = 64
	// WebhookSecretPrefix starts a Standard Webhooks signing secret.
	WebhookSecretPrefix = "whsec_"
	// MinWebhookKey and MaxWebhookKey bound the decoded webhook key.
	MinWebhookKey = 24
	MaxWebhookKey = 64
	// MinTOTPKey is RFC 4226 section 4's minimum shared secret: 128 bits.
	MinTOTPKey = 16
)

// CheckCredential accepts an API_KEY or ADMIN_TOKEN: printable ASCII without
// spaces (credentials travel in headers, query strings and form fields,
// where anything else is mangled) and at least MinCredentialLen long.
func CheckCredential(v string) error {
	if v == "" {
		return errors.New("is required")
	}
	for _, c := range v {
		if c <= ' ' || c > '~' {
			return errors.New("must be printable ASCII without spaces")
		}
	}
	if len(v) < MinCredentialLen {
		return fmt.Errorf("must be at least %d characters", MinCredentialLen)
	}
	return nil
}

// CheckDistinct refuses an ADMIN_TOKEN equal to the API_KEY: the admin token
// grants more than sending.
func CheckDistinct(apiKey, adminToken string) error {
	if subtle.ConstantTimeCompare([]byte(apiKey), []byte(adminToken)) == 1 {
		return errors.New("must differ from API_KEY: the admin token grants more than sending")
	}
	return nil
}

// ParseEncryptionKey decodes ENCRYPTION_KEY: 64 hex characters, not all
// zero (a placeholder, not a key).
func ParseEncryptionKey(v string) ([]byte, error) {
	if v == "" {
		return nil, errors.New("is required (64 hex characters; generate one with: openssl rand -hex 32)")
	}
	if len(v) != EncryptionKeyHexLen {
		return nil, fmt.Errorf("must be 64 hex characters (32 bytes), got %d characters", len(v))
	}
	key, err := hex.DecodeString(v)
	if err != nil {
		return nil, errors.New("must be 64 hex characters (0-9, a-f)")
	}
	if strings.Trim(v, "0") == "" {
		return nil, errors.New("must not be all zero: generate one with: openssl rand -hex 32")
	}
	return key, nil
}

// ParseWebhookSecret decodes WEBHOOK_SECRET, whsec_ and the standard base64
// of a key of MinWebhookKey to MaxWebhookKey bytes. Empty means unsigned.
func ParseWebhookSecret(v string) ([]byte, error) {
	if v == "" {
		return nil, nil
	}
	if !strings.HasPrefix(v, WebhookSecretPrefix) {
		return nil, errors.New("must start with whsec_ followed by base64")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(v, WebhookSecretPrefix))
	if err != nil {
		return nil, errors.New("is not valid base64 after whsec_")
	}
	if len(key) < MinWebhookKey || len(key) > MaxWebhookKey {
		return nil, fmt.Errorf("must decode to %d-%d bytes, got %d", MinWebhookKey, MaxWebhookKey, len(key))
	}
	return key, nil
}

// ParseTOTPSecret decodes TOTP_SECRET, base32 as authenticator apps show it
// (any case, grouped with spaces or dashes, padding optional), of at least
// MinTOTPKey bytes. Empty means one-time passwords are off.
func ParseTOTPSecret(v string) ([]byte, error) {
	if v == "" {
		return nil, nil
	}
	clean := strings.ToUpper(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' {
			return -1
		}
		return r
	}, v))
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimRight(clean, "="))
	if err != nil {
		return nil, errors.New("is not base32 (A-Z, 2-7)")
	}
	if len(key) < MinTOTPKey {
		return nil, fmt.Errorf("must hold at least %d bytes (128 bits, RFC 4226); got %d", MinTOTPKey, len(key))
	}
	return key, nil
}

// CheckCredentials checks the credential settings present in values, keyed
// by env name (API_KEY, ADMIN_TOKEN, ENCRYPTION_KEY, WEBHOOK_SECRET,
// TOTP_SECRET), and returns the first failure as "NAME must ...", in that
// order. Settings absent from values are not checked.
func CheckCredentials(values map[string]string) error {
	checks := []struct {
		env   string
		check func(string) error
	}{
		{"API_KEY", CheckCredential},
		{"ADMIN_TOKEN", CheckCredential},
		{"ENCRYPTION_KEY", func(v string) error { _, err := ParseEncryptionKey(v); return err }},
		{"WEBHOOK_SECRET", func(v string) error { _, err := ParseWebhookSecret(v); return err }},
		{"TOTP_SECRET", func(v string) error { _, err := ParseTOTPSecret(v); return err }},
	}
	for _, c := range checks {
		v, ok := values[c.env]
		if !ok {
			continue
		}
		if err := c.check(v); err != nil {
			return fmt.Errorf("%s %w", c.env, err)
		}
	}
	apiKey, okA := values["API_KEY"]
	admin, okB := values["ADMIN_TOKEN"]
	if okA && okB {
		if err := CheckDistinct(apiKey, admin); err != nil {
			return fmt.Errorf("ADMIN_TOKEN %w", err)
		}
	}
	return nil
}
