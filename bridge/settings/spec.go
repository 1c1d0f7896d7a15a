package settings

import (
	"crypto/subtle"
	"fmt"
	"time"
)

// setting describes one bridge setting: its environment name, its default and
// how its text becomes a field of Settings.
type setting struct {
	env   string
	def   string
	usage string
	// parse validates text and stores it in s; its error names no setting
	// (Load prefixes the name) and never quotes a secret value.
	parse func(s *Settings, text string) error
}

// flagName is the command-line form of an environment name: API_KEY -> api-key.
func (d setting) flagName() string {
	b := []byte(d.env)
	for i, c := range b {
		switch {
		case c == '_':
			b[i] = '-'
		case c >= 'A' && c <= 'Z':
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// Minimum lengths and bounds of the settings, with the reason for each.
const (
	// minCredentialLen keeps API keys and admin tokens out of guessing range.
	minCredentialLen = 16
	// maxFileSizeLimit is WhatsApp's own ceiling for a document.
	maxFileSizeLimit = 2 << 30
	// maxRetries matches the MessagingBridge resource's bound on retry delays.
	maxRetries = 10
	// maxRetryDelay keeps a retry inside the 24 h window of idempotency keys.
	maxRetryDelay = 6 * time.Hour
	// Heartbeats faster than this only load the database; slower ones let a
	// dead connection look alive for too long.
	minHeartbeat = 100 * time.Millisecond
	maxHeartbeat = 10 * time.Minute
)

// specs lists every setting in the order of DESIGN.md section 2.
var specs = []setting{
	{env: "LISTEN_ADDR", def: ":8080", usage: "HTTP listen address (host:port)", parse: func(s *Settings, v string) (err error) {
		s.ListenAddr, err = parseListenAddr(v)
		return err
	}},
	{env: "DATA_DIR", def: "./data", usage: "folder of all persistent state", parse: func(s *Settings, v string) (err error) {
		s.DataDir, err = parseDataDir(v)
		return err
	}},
	{env: "API_KEY", usage: "credential for POST /send and message log reads (required)", parse: func(s *Settings, v string) (err error) {
		s.APIKey, err = parseCredential(v)
		return err
	}},
	{env: "ADMIN_TOKEN", usage: "credential for /session/* and /api/admin/* (required)", parse: func(s *Settings, v string) (err error) {
		if s.AdminToken, err = parseCredential(v); err != nil {
			return err
		}
		// API_KEY is parsed first (order of specs), so both are known here.
		if subtle.ConstantTimeCompare([]byte(s.AdminToken), []byte(s.APIKey)) == 1 {
			return fmt.Errorf("must differ from API_KEY: the admin token grants more than sending")
		}
		return nil
	}},
	{env: "ENCRYPTION_KEY", usage: "64 hex characters (32 bytes) that encrypt the databases (required)", parse: func(s *Settings, v string) (err error) {
		s.EncryptionKey, err = parseEncryptionKey(v)
		return err
	}},
	{env: "WEBHOOK_URL", usage: "receiver of webhook events; webhooks off when empty", parse: func(s *Settings, v string) (err error) {
		s.WebhookURL, err = parseWebhookURL(v)
		return err
	}},
	{env: "WEBHOOK_SECRET", usage: "Standard Webhooks secret whsec_<base64>; unsigned when empty", parse: func(s *Settings, v string) (err error) {
		s.WebhookSecret, err = parseWebhookSecret(v)
		return err
	}},
	{env: "MAX_FILE_SIZE", def: "50MB", usage: "largest attachment, in bytes or with a unit (50MB, 10MiB)", parse: func(s *Settings, v string) (err error) {
		s.MaxFileSize, err = parseFileSize(v)
		return err
	}},
	{env: "TOTP_SECRET", usage: "base32 RFC 6238 secret for dashboard one-time passwords", parse: func(s *Settings, v string) (err error) {
		s.TOTPSecret, err = parseTOTPSecret(v)
		return err
	}},
	{env: "RETRY_SCHEDULE", def: "5s,15s,60s", usage: "delays of the retries after the immediate attempt", parse: func(s *Settings, v string) (err error) {
		s.RetrySchedule, err = parseRetrySchedule(v)
		return err
	}},
	{env: "HEARTBEAT_INTERVAL", def: "15s", usage: "how often a live connection's heartbeat is recorded", parse: func(s *Settings, v string) (err error) {
		s.HeartbeatInterval, err = parseHeartbeat(v)
		return err
	}},
	{env: "LOG_LEVEL", def: "info", usage: "debug, info, warn or error", parse: func(s *Settings, v string) (err error) {
		s.LogLevel, err = ParseLogLevel(v)
		return err
	}},
}
