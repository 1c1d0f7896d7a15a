package settings

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/contract"
)

// setting describes one bridge setting: its environment name, its default and
// how its text becomes a field of Settings.
type setting struct {
	env   string
	def   string
	usage string
	// parse validates text and stores it in the Settings the table was made
	// for; its error names no setting (Load prefixes the name) and never
	// quotes a secret value.
	parse func(text string) error
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
	// maxFileSizeLimit is WhatsApp's own ceiling for a document.
	maxFileSizeLimit = 2 << 30
	// maxSpoolLimit only keeps the byte count far from overflow.
	maxSpoolLimit = 1 << 50
	// maxRetries matches the MessagingBridge resource's bound on retry delays.
	maxRetries = 10
	// maxRetryDelay keeps a retry inside the 24 h window of idempotency keys.
	maxRetryDelay = 6 * time.Hour
	// Heartbeats faster than this only load the database; slower ones let a
	// dead connection look alive for too long.
	minHeartbeat = 100 * time.Millisecond
	maxHeartbeat = 10 * time.Minute
	// What the bridge received is kept at least a second (a short retention
	// is for tests and for bridges that want no history; the sweeps run at
	// most every second), at most a year.
	minRetention = time.Second
	maxRetention = 8760 * time.Hour
)

// into is the parse of a setting that stores parse's result in *field.
func into[T any](field *T, parse func(string) (T, error)) func(string) error {
	return func(text string) (err error) {
		*field, err = parse(text)
		return err
	}
}

// specsFor lists every setting in the order of the contract, each
// parsing into its field of s.
func specsFor(s *Settings) []setting {
	return slices.Concat(baseSpecs(s), protectionSpecs(s), cloudSpecs(s), boundSpecs(s))
}

// baseSpecs are the settings up to the pace of sends.
func baseSpecs(s *Settings) []setting {
	return []setting{
		{env: contract.EnvListenAddr, def: contract.DefaultListenAddr, usage: "HTTP listen address (host:port)",
			parse: into(&s.ListenAddr, parseListenAddr)},
		{env: contract.EnvDataDir, def: contract.DefaultDataDir, usage: "folder of all persistent state",
			parse: into(&s.DataDir, parseDataDir)},
		{env: contract.EnvAPIKey, usage: "credential for POST /send and message log reads (required)",
			parse: into(&s.APIKey, parseCredential)},
		{env: contract.EnvAdminToken, usage: "credential for /session/* and /api/admin/* (required)",
			parse: func(v string) error { return parseAdminToken(s, v) }},
		{env: contract.EnvEncryptionKey, usage: "64 hex characters (32 bytes) that encrypt the databases (required)",
			parse: into(&s.EncryptionKey, parseEncryptionKey)},
		{env: contract.EnvWebhookURL, usage: "receiver of webhook events; webhooks off when empty",
			parse: into(&s.WebhookURL, parseWebhookURL)},
		{env: contract.EnvWebhookSecret, usage: "Standard Webhooks secret whsec_<base64>; unsigned when empty",
			parse: into(&s.WebhookSecret, parseWebhookSecret)},
		{env: contract.EnvMaxFileSize, def: contract.DefaultMaxFileSize, usage: "largest attachment, in bytes or with a unit (50MB, 10MiB)",
			parse: into(&s.MaxFileSize, parseFileSize)},
		{env: contract.EnvTOTPSecret, usage: "base32 RFC 6238 secret for dashboard one-time passwords",
			parse: into(&s.TOTPSecret, parseTOTPSecret)},
		{env: contract.EnvRetrySchedule, def: contract.DefaultRetrySchedule, usage: "delays of the retries after the immediate attempt",
			parse: into(&s.RetrySchedule, parseRetrySchedule)},
		{env: contract.EnvHeartbeatInterval, def: contract.DefaultHeartbeatInterval.String(), usage: "how often a live connection's heartbeat is recorded",
			parse: into(&s.HeartbeatInterval, parseHeartbeat)},
		{env: contract.EnvLogLevel, def: contract.DefaultLogLevel, usage: "debug, info, warn or error",
			parse: into(&s.LogLevel, logging.ParseLevel)},
		{env: contract.EnvSpoolMaxBytes, usage: "bytes the attachments' spool may hold; default a quarter of DATA_DIR's free space at start-up",
			parse: func(v string) error { return parseSpoolMax(s, v) }},
		{env: contract.EnvInboxRetention, def: formatHours(contract.DefaultInboxRetention), usage: "how long incoming messages are kept for listing and webhook replays (from 1s to 8760h)",
			parse: into(&s.InboxRetention, parseRetention)},
		{env: contract.EnvMessageRetention, def: formatHours(contract.DefaultMessageRetention), usage: "how long finished outgoing messages are kept in the message log (from 1s to 8760h)",
			parse: into(&s.MessageRetention, parseRetention)},
		{env: contract.EnvMediaRetention, def: formatHours(contract.DefaultMediaRetention), usage: "how long incoming attachments are kept (from 1s to 8760h)",
			parse: into(&s.MediaRetention, parseRetention)},
	}
}

// protectionSpecs are the settings from the pace of sends on: protecting
// the account, bounds on callers, the rest.
func protectionSpecs(s *Settings) []setting {
	return []setting{
		{env: contract.EnvSendRate, def: contract.DefaultSendRate, usage: "most send attempts of the account: N/s, N/m or N/h, with jitter",
			parse: into(&s.SendRate, ParseSendRate)},
		{env: contract.EnvGroupActionRate, def: contract.DefaultGroupActionRate, usage: "most group actions (one per participant named) after a burst of 5: N/s, N/m or N/h, with jitter",
			parse: into(&s.GroupActionRate, ParseSendRate)},
		{env: contract.EnvTypingDelay, def: contract.DefaultTypingDelay, usage: `"composing" before each text: off, <duration>/char or <duration>/char,max=<duration>`,
			parse: into(&s.TypingDelay, ParseTypingDelay)},
		{env: contract.EnvRestrictionBackoff, def: contract.DefaultRestrictionBackoff, usage: "first pause after a WhatsApp rate limit without an end; doubles up to 1h",
			parse: into(&s.RestrictionBackoff, parseRestrictionBackoff)},
		{env: contract.EnvMaxUploads, def: contract.DefaultMaxUploads, usage: "large bodies read at once from callers not yet verified (1-10000)",
			parse: into(&s.MaxUploads, countUpTo(maxUploadsLimit))},
		{env: contract.EnvUploadsPerAddress, def: contract.DefaultUploadsPerAddress, usage: "of those, how many one client address may hold (1-MAX_UPLOADS)",
			parse: func(v string) error { return parseUploadsPerAddress(s, v) }},
		{env: contract.EnvKeyDeadline, def: contract.DefaultKeyDeadline, usage: "how long a body may take to present its credential (100ms-5m)",
			parse: into(&s.KeyDeadline, durationWithin(minKeyDeadline, maxKeyDeadline))},
		{env: contract.EnvCheckRate, def: contract.DefaultCheckRate, usage: "number checks that reach WhatsApp after the burst: N/s, N/m or N/h",
			parse: into(&s.CheckRate, ParseSendRate)},
		{env: contract.EnvCheckBurst, def: contract.DefaultCheckBurst, usage: "number checks that may reach WhatsApp at once (1-100)",
			parse: into(&s.CheckBurst, countUpTo(maxCheckBurst))},
		{env: contract.EnvStatusAudienceRate, def: contract.DefaultStatusAudienceRate, usage: "recipients of status posts that may be reached: N/s, N/m or N/h, a burst of at least 256; a status waits until its audience fits (recipients unknown to the account also count against CHECK_RATE)",
			parse: into(&s.StatusAudienceRate, ParseSendRate)},
		{env: contract.EnvTrustedProxies, usage: "comma-separated CIDRs whose X-Forwarded-For is believed (an Ingress); empty: none",
			parse: into(&s.TrustedProxies, guard.ParseProxies)},
		{env: contract.EnvPresenceInterval, def: contract.DefaultPresenceInterval, usage: "shortest time between two chat states sent into one chat (1s-1m)",
			parse: into(&s.PresenceInterval, durationWithin(time.Second, time.Minute))},
		{env: contract.EnvUploadRetention, def: formatHours(contract.DefaultUploadRetention), usage: "how long an upload is kept for sending by id (from 1s to 8760h)",
			parse: into(&s.UploadRetention, parseRetention)},
		{env: contract.EnvApprovalTimeout, def: formatHours(contract.DefaultApprovalTimeout), usage: "how long a send held for approval waits for a person before it fails with approval_expired (from 1s to 8760h)",
			parse: into(&s.ApprovalTimeout, parseRetention)},
		{env: contract.EnvPprof, def: contract.DefaultPprof, usage: "on: Go's profiles under /debug/pprof/, behind the admin token",
			parse: into(&s.Pprof, parseOnOff)},
		{env: contract.EnvStatusUpdates, def: contract.DefaultStatusUpdates, usage: "on: contacts' status updates become status.update events; off: acknowledged and dropped",
			parse: into(&s.StatusUpdates, parseOnOff)},
		{env: contract.EnvChannelPosts, def: contract.DefaultChannelPosts, usage: "on: the posts of the channels the account follows become channel.post events; off: acknowledged and dropped",
			parse: into(&s.ChannelPosts, parseOnOff)},
		{env: contract.EnvWAVersion, usage: "WhatsApp Web version the client announces, 2.3000.N; empty: the one learned from WhatsApp Web (daily), else the build's",
			parse: into(&s.WAVersion, parseWAVersion)},
		{env: contract.EnvRejectCalls, def: contract.DefaultRejectCalls, usage: "incoming calls the bridge rejects: off, all, or unknown (callers not in the account's contacts); each is a call.offer and a call.ended event either way",
			parse: into(&s.RejectCalls, parseRejectCalls)},
		{env: contract.EnvRejectCallsReply, usage: "text sent, through the send queue, to a caller whose call was rejected; empty: none",
			parse: into(&s.RejectCallsReply, parseReplyText)},
		{env: contract.EnvConnectJitter, def: contract.DefaultConnectJitter, usage: "longest random wait before the first connect after a start (0s-1m; 0s: none), so that a fleet restarted together does not connect in one burst",
			parse: into(&s.ConnectJitter, durationWithin(0, time.Minute))},
		{env: contract.EnvDiskReserve, usage: "free space of DATA_DIR's volume below which the bridge stops receiving and refuses sends (507); default the larger of 64MiB and 2% of the volume, at most a quarter of it",
			parse: into(&s.DiskReserve, parseDiskReserve)},
	}
}

// cloudSpecs are the settings of the Cloud API door.
func cloudSpecs(s *Settings) []setting {
	return []setting{
		{env: contract.EnvCloudMediaHosts, usage: "comma-separated hosts (host or host:port) the Cloud API door fetches media links from; empty: links refused",
			parse: into(&s.CloudMediaHosts, parseHosts)},
	}
}

// Bounds of the limits on bodies from callers not yet verified: a deadline
// under 100ms refuses honest clients on a slow link, one over 5m is no
// bound; more than 10000 slots is no bound on memory.
const (
	maxUploadsLimit = 10000
	minKeyDeadline  = 100 * time.Millisecond
	maxKeyDeadline  = 5 * time.Minute
	// A larger burst of number checks is the enumeration CHECK_RATE is for.
	maxCheckBurst = 100
)

// parseUploadsPerAddress is a count up to MAX_UPLOADS, parsed first (order
// of specsFor).
func parseUploadsPerAddress(s *Settings, v string) (err error) {
	s.UploadsPerAddress, err = countUpTo(s.MaxUploads)(v)
	return err
}

// Bounds of RESTRICTION_BACKOFF: shorter pauses hammer a rate limit, longer
// ones exceed the back-off's own ceiling.
const (
	minRestrictionBackoff = 10 * time.Millisecond
	maxRestrictionBackoff = time.Hour
)

func parseRestrictionBackoff(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (for example 1m)", v)
	}
	if d < minRestrictionBackoff || d > maxRestrictionBackoff {
		return 0, fmt.Errorf("must be from %s to %s, got %s", minRestrictionBackoff, maxRestrictionBackoff, d)
	}
	return d, nil
}

// parseOnOff is a switch written exactly on or off: a typo must not
// silently leave a profile endpoint open or closed.
func parseOnOff(v string) (bool, error) {
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither on nor off", v)
}

// parseSpoolMax is empty (the default) or a size of at least MAX_FILE_SIZE,
// which is parsed first (order of specsFor): a smaller spool could never
// take the largest attachment the API accepts.
func parseSpoolMax(s *Settings, v string) (err error) {
	if v == "" {
		return nil
	}
	if s.SpoolMaxBytes, err = parseSize(v, maxSpoolLimit, "1PiB"); err != nil {
		return err
	}
	if s.SpoolMaxBytes < s.MaxFileSize {
		return fmt.Errorf("must be at least MAX_FILE_SIZE (%d bytes), got %q", s.MaxFileSize, v)
	}
	return nil
}

// minDiskReserve is the smallest DISK_RESERVE: below it a single SQLite
// transaction's journal may not fit, and the guard would stop too late.
const minDiskReserve = 1 << 20

// parseDiskReserve is empty (the default, chosen from the volume's size at
// start-up) or a size from 1MiB.
func parseDiskReserve(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := parseSize(v, maxSpoolLimit, "1PiB")
	if err != nil {
		return 0, err
	}
	if n < minDiskReserve {
		return 0, fmt.Errorf("must be at least 1MiB, got %q", v)
	}
	return n, nil
}

// parseAdminToken is a credential that differs from API_KEY, which is parsed
// first (order of specsFor), so both are known here.
func parseAdminToken(s *Settings, v string) (err error) {
	if s.AdminToken, err = parseCredential(v); err != nil {
		return err
	}
	return contract.CheckDistinct(s.APIKey.Reveal(), s.AdminToken.Reveal())
}

// parseWAVersion checks WA_VERSION's grammar (contract.WAVersionPattern) and
// keeps the text; empty is unset.
func parseWAVersion(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if _, err := contract.ParseWAVersion(v); err != nil {
		return "", err
	}
	return v, nil
}

// parseRejectCalls is one of bridge.RejectCallsModes.
func parseRejectCalls(v string) (bridge.RejectCalls, error) {
	if mode := bridge.RejectCalls(v); slices.Contains(bridge.RejectCallsModes, mode) {
		return mode, nil
	}
	return "", fmt.Errorf("must be off, all or unknown, got %q", bridge.Truncate(v, 32))
}

// parseReplyText is a message text: valid UTF-8 within WhatsApp's limit.
func parseReplyText(v string) (string, error) {
	if len(v) > bridge.MaxTextBytes || !utf8.ValidString(v) {
		return "", fmt.Errorf("must be UTF-8 text of at most %d bytes", bridge.MaxTextBytes)
	}
	return v, nil
}
