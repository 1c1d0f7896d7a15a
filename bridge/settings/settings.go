// Package settings loads and validates the bridge's settings (DESIGN.md
// section 2) from environment variables and the matching command-line flags.
//
// A setting is read from its flag (--listen-addr) when given, else from its
// environment variable (LISTEN_ADDR), else it takes its default. Every value is
// validated before anything else starts, so a bad one stops the process with a
// single line that names the setting and nothing on disk is touched.
package settings

import (
	"time"

	"github.com/go-logr/logr"
)

// Settings is the validated configuration of one bridge process.
type Settings struct {
	ListenAddr    string
	DataDir       string
	APIKey        Secret
	AdminToken    Secret
	EncryptionKey Secret // 64 hex characters; decoded by the store
	WebhookURL    string // empty: webhooks off
	// WebhookSecret is the decoded key of the whsec_ secret; empty: unsigned.
	WebhookSecret     Secret
	MaxFileSize       int64
	TOTPSecret        Secret // decoded RFC 6238 key; empty: no TOTP
	RetrySchedule     []time.Duration
	HeartbeatInterval time.Duration
	LogLevel          LogLevel
}

// Secret is a credential. It formats as "[redacted]" so that printing a
// Settings value, by mistake or in a debug line, never leaks one.
type Secret string

// String hides the secret from fmt and loggers.
func (Secret) String() string { return "[redacted]" }

// GoString hides the secret from %#v.
func (Secret) GoString() string { return `"[redacted]"` }

// MarshalLog hides the secret from logr sinks.
func (Secret) MarshalLog() any { return "[redacted]" }

// Reveal returns the secret itself, for the one place that needs it.
func (s Secret) Reveal() string { return string(s) }

var _ logr.Marshaler = Secret("")
