// Package settings loads and validates the bridge's settings
// from environment variables and the matching command-line flags.
//
// A setting is read from its flag (--listen-addr) when given, else from its
// environment variable (LISTEN_ADDR), else it takes its default. Every value is
// validated before anything else starts, so a bad one stops the process with a
// single line that names the setting and nothing on disk is touched.
package settings

import (
	"net/netip"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/logging"
)

// Settings is the validated configuration of one bridge process.
type Settings struct {
	ListenAddr string
	DataDir    string
	APIKey     bridge.Secret
	AdminToken bridge.Secret
	// The secrets below are decoded from their text forms, so their users
	// take the bytes as they are.
	EncryptionKey bridge.Secret // the 32 bytes of the 64 hex characters
	WebhookURL    string        // empty: webhooks off
	// WebhookSecret is the decoded key of the whsec_ secret; empty: unsigned.
	WebhookSecret     bridge.Secret
	MaxFileSize       int64
	TOTPSecret        bridge.Secret // decoded RFC 6238 key; empty: no TOTP
	RetrySchedule     []time.Duration
	HeartbeatInterval time.Duration
	LogLevel          logging.Level
	// SpoolMaxBytes bounds the attachments' spool; 0: the default, a
	// quarter of DATA_DIR's free space when the bridge starts.
	SpoolMaxBytes int64
	// InboxRetention is how long the incoming history keeps a message.
	InboxRetention time.Duration
	// MessageRetention is how long the message log keeps a finished
	// outgoing message.
	MessageRetention time.Duration
	// MediaRetention is how long incoming attachments are kept.
	MediaRetention time.Duration
	// SendRate caps the account's send attempts (SEND_RATE).
	SendRate bridge.SendRate
	// GroupActionRate paces group administration (GROUP_ACTION_RATE).
	GroupActionRate bridge.SendRate
	// TypingDelay shows composing before each text; zero: off.
	TypingDelay bridge.TypingDelay
	// RestrictionBackoff is the first pause after a rate limit that names
	// no end; it doubles while WhatsApp keeps refusing.
	RestrictionBackoff time.Duration
	// MaxUploads, UploadsPerAddress and KeyDeadline bound the bodies of
	// callers whose credential is not verified yet.
	MaxUploads        int
	UploadsPerAddress int
	KeyDeadline       time.Duration
	// CheckRate and CheckBurst budget the number checks that reach
	// WhatsApp.
	CheckRate  bridge.SendRate
	CheckBurst int
	// StatusAudienceRate paces the recipients of status posts
	// (STATUS_AUDIENCE_RATE).
	StatusAudienceRate bridge.SendRate
	// TrustedProxies are the CIDRs whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// PresenceInterval paces the chat states of the API per chat.
	PresenceInterval time.Duration
	// UploadRetention is how long an upload is kept for sending by id.
	UploadRetention time.Duration
	// ApprovalTimeout is how long a send held for approval waits for a
	// person before it fails with approval_expired.
	ApprovalTimeout time.Duration
	// Pprof serves Go's profiles under /debug/pprof/ behind the admin token.
	Pprof bool
	// DiskReserve is the free space of DATA_DIR's volume below which the
	// bridge stops receiving and refuses sends; 0: the default, the larger
	// of 64 MiB and 2 % of the volume.
	DiskReserve int64
	// CloudMediaHosts are the hosts (host or host:port) the Cloud API
	// door fetches media links from; empty: every link is refused.
	CloudMediaHosts []string
	// StatusUpdates passes contacts' status updates on as status.update
	// events; false: they are acknowledged and dropped.
	StatusUpdates bool
	// ChannelPosts passes the posts of followed channels on as channel.post
	// events; false: they are acknowledged and dropped.
	ChannelPosts bool
	// WAVersion is the WhatsApp Web version the client announces (WA_VERSION,
	// 2.3000.N); empty: the one the bridge learned, else the build's.
	WAVersion string
	// RejectCalls is which incoming calls the bridge rejects (REJECT_CALLS);
	// RejectCallsReply the text it sends their callers, empty for none.
	RejectCalls      bridge.RejectCalls
	RejectCallsReply string
	// ConnectJitter is the longest random wait before the first connect
	// after a start (CONNECT_JITTER); zero: none.
	ConnectJitter time.Duration
	// EventStreams and EventStreamsPerAddress cap the open event streams
	// in all and from one client address.
	EventStreams           int
	EventStreamsPerAddress int
	// LogFilesMaxBytes bounds the daily log files together.
	LogFilesMaxBytes int64
	// WebhookLocalTargets lets subscriptions reach loopback and link-local
	// addresses.
	WebhookLocalTargets bool
	// DeliveredRetention is how long delivered events stay in the outbox;
	// EventLogRetention how long the event log keeps an event.
	DeliveredRetention, EventLogRetention time.Duration
}
