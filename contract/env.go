package contract

import "time"

// The bridge's settings by environment name (each is also a flag,
// --lower-case-name). The bridge reads them; the operator writes them into
// the bridge's container.
const (
	EnvListenAddr        = "LISTEN_ADDR"
	EnvDataDir           = "DATA_DIR"
	EnvAPIKey            = "API_KEY"
	EnvAdminToken        = "ADMIN_TOKEN"
	EnvEncryptionKey     = "ENCRYPTION_KEY"
	EnvWebhookURL        = "WEBHOOK_URL"
	EnvWebhookSecret     = "WEBHOOK_SECRET"
	EnvMaxFileSize       = "MAX_FILE_SIZE"
	EnvTOTPSecret        = "TOTP_SECRET"
	EnvRetrySchedule     = "RETRY_SCHEDULE"
	EnvHeartbeatInterval = "HEARTBEAT_INTERVAL"
	EnvLogLevel          = "LOG_LEVEL"
	// EnvSpoolMaxBytes bounds DATA_DIR/spool, where attachments wait to be
	// sent; empty: a quarter of DATA_DIR's free space at start-up.
	EnvSpoolMaxBytes = "SPOOL_MAX_BYTES"
	// EnvInboxRetention is how long incoming messages are kept for GET
	// /api/messages?direction=in and webhook replays.
	EnvInboxRetention = "INBOX_RETENTION"
	// EnvMediaRetention is how long incoming attachments are kept under
	// DATA_DIR/media (a duration).
	EnvMediaRetention = "MEDIA_RETENTION"
	// EnvSendRate caps the account's send attempts (N/s, N/m, N/h).
	EnvSendRate = "SEND_RATE"
	// EnvGroupActionRate paces group administration (N/s, N/m, N/h): a
	// token per participant an action names.
	EnvGroupActionRate = "GROUP_ACTION_RATE"
	// EnvTypingDelay shows "composing" before each text (off by default).
	EnvTypingDelay = "TYPING_DELAY"
	// EnvRestrictionBackoff is the first pause after a WhatsApp rate limit
	// that names no end; it doubles while WhatsApp keeps refusing.
	EnvRestrictionBackoff = "RESTRICTION_BACKOFF"
	// EnvMaxUploads is how many large bodies from callers not yet verified
	// are read at once; EnvUploadsPerAddress how many of them one address
	// may hold; EnvKeyDeadline how long such a body may take to present
	// its credential.
	EnvMaxUploads        = "MAX_UPLOADS"
	EnvUploadsPerAddress = "UPLOADS_PER_ADDRESS"
	EnvKeyDeadline       = "KEY_DEADLINE"
	// EnvCheckRate and EnvCheckBurst budget the number checks that reach
	// WhatsApp (GET /api/contacts/{number} and the queue's own checks).
	EnvCheckRate  = "CHECK_RATE"
	EnvCheckBurst = "CHECK_BURST"
	// EnvStatusAudienceRate paces the recipients of status posts (N/h,
	// N/m or N/s): a status waits until its whole audience fits.
	EnvStatusAudienceRate = "STATUS_AUDIENCE_RATE"
	// EnvTrustedProxies lists the CIDRs whose X-Forwarded-For the bridge
	// believes (an Ingress controller's pods); empty believes none.
	EnvTrustedProxies = "TRUSTED_PROXIES"
	// EnvPresenceInterval is the shortest time between two chat states the
	// API sends into one chat.
	EnvPresenceInterval = "PRESENCE_INTERVAL"
	// EnvUploadRetention is how long an upload of POST /api/uploads is kept.
	EnvUploadRetention = "UPLOAD_RETENTION"
	// EnvApprovalTimeout is how long a send held for approval waits for a
	// person before it fails (approval_expired).
	EnvApprovalTimeout = "APPROVAL_TIMEOUT"
	// EnvPprof serves Go's profiles under /debug/pprof/ behind the admin
	// token when on (off by default).
	EnvPprof = "PPROF"
	// EnvDiskReserve is the free space of DATA_DIR's volume below which the
	// bridge stops receiving and refuses sends; empty: the larger of 64 MiB
	// and 2 % of the volume.
	EnvDiskReserve = "DISK_RESERVE"
	// EnvCloudMediaHosts lists the hosts the Cloud API door fetches media
	// links from; empty refuses every link.
	EnvCloudMediaHosts = "CLOUD_MEDIA_HOSTS"
	// EnvMessageRetention is how long finished outgoing messages (sent,
	// delivered, read or failed) are kept in the message log.
	EnvMessageRetention = "MESSAGE_RETENTION"
	// EnvStatusUpdates passes contacts' status updates on as status.update
	// events when on (off by default: they are acknowledged and dropped).
	EnvStatusUpdates = "STATUS_UPDATES"
	// EnvChannelPosts passes the posts of the channels the account follows
	// on as channel.post events when on (off by default: acknowledged and
	// dropped).
	EnvChannelPosts = "CHANNEL_POSTS"
	// EnvWAVersion pins the WhatsApp Web version the client announces
	// (2.3000.N); empty: the last version the bridge learned from WhatsApp
	// Web, else the build's.
	EnvWAVersion = "WA_VERSION"
	// EnvRejectCalls rejects incoming calls: off, all, or unknown (callers
	// who are not the account's contacts); EnvRejectCallsReply, when set, is
	// the text sent to a caller whose call was rejected.
	EnvRejectCalls      = "REJECT_CALLS"
	EnvRejectCallsReply = "REJECT_CALLS_REPLY"
	// EnvConnectJitter spreads the first connect after a start over a
	// random wait up to it, so that a fleet restarted together (a node
	// reboot) does not reach WhatsApp from one address in one burst.
	EnvConnectJitter = "CONNECT_JITTER"
	// EnvEventStreams caps the open GET /api/events streams in all;
	// EnvEventStreamsPerAddress those from one client address.
	EnvEventStreams           = "EVENT_STREAMS"
	EnvEventStreamsPerAddress = "EVENT_STREAMS_PER_ADDRESS"
	// EnvLogFilesMaxBytes bounds the daily log files under DATA_DIR/logs
	// together (a size).
	EnvLogFilesMaxBytes = "LOG_FILES_MAX_BYTES"
	// EnvWebhookLocalTargets lets subscriptions reach loopback and
	// link-local addresses when on (off by default).
	EnvWebhookLocalTargets = "WEBHOOK_LOCAL_TARGETS"
	// EnvDeliveredRetention is how long delivered events stay in the
	// webhook outbox; EnvEventLogRetention how long the event log keeps an
	// event (how far back GET /api/events resumes).
	EnvDeliveredRetention = "DELIVERED_RETENTION"
	EnvEventLogRetention  = "EVENT_LOG_RETENTION"
)

// The defaults of the settings that have one, as the bridge reads them. The
// credentials are required; WEBHOOK_URL, WEBHOOK_SECRET and TOTP_SECRET are
// off when empty.
const (
	DefaultListenAddr    = ":8080"
	DefaultDataDir       = "./data"
	DefaultMaxFileSize   = "50MB"
	DefaultRetrySchedule = "5s,15s,60s"
	DefaultLogLevel      = "info"
	DefaultSendRate      = "20/m"
	DefaultTypingDelay   = "off"
	// DefaultGroupActionRate: 4 group actions (or participants) a minute
	// after a burst of 5; WhatsApp bans accounts that mass-add.
	DefaultGroupActionRate = "4/m"
	// DefaultRestrictionBackoff is the first pause after a rate limit.
	DefaultRestrictionBackoff = "1m"
	DefaultPprof              = "off"
	DefaultStatusUpdates      = "off"
	DefaultChannelPosts       = "off"
	DefaultRejectCalls        = "off"
	DefaultConnectJitter      = "5s"
	// DefaultHeartbeatInterval is a duration: the operator also judges a
	// heartbeat's age by it.
	DefaultHeartbeatInterval = 15 * time.Second
	DefaultInboxRetention    = 720 * time.Hour
	// DefaultMessageRetention keeps finished outgoing messages as long as
	// the incoming history.
	DefaultMessageRetention = 720 * time.Hour
	// DefaultMediaRetention keeps incoming attachments a week.
	DefaultMediaRetention = 168 * time.Hour
	// The defaults of the bounds on bodies from callers not yet verified.
	DefaultMaxUploads        = "32"
	DefaultUploadsPerAddress = "4"
	DefaultKeyDeadline       = "10s"
	// The budget of number checks: 5 at once, then one every 6 s.
	DefaultCheckRate = "10/m"
	// DefaultStatusAudienceRate: 300 recipients of status posts an hour
	// (a burst of one full audience, 256, then one every 12 s).
	DefaultStatusAudienceRate = "300/h"
	DefaultCheckBurst         = "5"
	// DefaultPresenceInterval: a person does not change a chat's state
	// more often.
	DefaultPresenceInterval = "5s"
	// DefaultUploadRetention keeps an upload a day.
	DefaultUploadRetention = 24 * time.Hour
	// DefaultApprovalTimeout gives a person a day to approve a held send.
	DefaultApprovalTimeout = 24 * time.Hour
	// The caps of the event streams: each holds a connection and two
	// goroutines for as long as it lasts.
	DefaultEventStreams           = "64"
	DefaultEventStreamsPerAddress = "8"
	// DefaultLogFilesMaxBytes: a day's file is set aside at 4 MiB.
	DefaultLogFilesMaxBytes = "64MiB"
	// DefaultWebhookLocalTargets: no subscription reaches the pod's own
	// ports or the cloud's metadata service.
	DefaultWebhookLocalTargets = "off"
	// DefaultDeliveredRetention keeps a delivered event a week, to look a
	// delivery up; DefaultEventLogRetention keeps the event log a day.
	DefaultDeliveredRetention = 168 * time.Hour
	DefaultEventLogRetention  = 24 * time.Hour
)
