package httpapi

import (
	"net/http"
	"net/netip"
	"regexp"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/apikeys"
	"github.com/msgbridge/msgbridge/bridge/groupadmin"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/httpapi/public"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// The router's tests name every port in one flat struct, as a test sets
// only the few it needs; testDeps.deps sorts them into each audience's.
type testDeps struct {
	Started                time.Time
	Now                    func() time.Time
	Session                testSession
	AdminToken             bridge.Secret
	Messages               Messages
	Pacing                 httpkit.Pacing
	Send                   SendConfig
	Uploads                messaging.Uploads
	Targets                ActionTargets
	Polls                  messaging.Polls
	Chats                  messaging.Chats
	Contacts               messaging.Contacts
	Groups                 messaging.GroupAdmin
	GroupActions           *groupadmin.Actions
	Channels               messaging.Channels
	Labels                 messaging.Labels
	Analytics              admin.DeliveryAnalytics
	Audit                  AuditRecorder
	LogFiles               admin.LogFiles
	Media                  messaging.MediaFiles
	Webhooks               admin.DeadLetters
	Subscriptions          admin.Subscriptions
	Events                 messaging.EventLog
	EventsHeartbeat        time.Duration
	EventsWriteTimeout     time.Duration
	EventStreams           int
	EventStreamsPerAddress int
	Inbox                  IncomingHistory
	Metrics                http.Handler
	Dashboard              http.Handler
	Guard                  *guard.Credentials
	Limits                 guard.Limits
	TrustedProxies         []netip.Prefix
	Log                    logr.Logger
	Pprof                  bool
	CloudAPI               func(checkKey KeyCheck) http.Handler
	CloudAPIPaths          *regexp.Regexp
	Keys                   *apikeys.Keys
	Approvals              admin.Approvals
}

// SendConfig is the old flat Send: the API key with the messaging API's
// configuration.
type SendConfig struct {
	APIKey        bridge.Secret
	SpoolDir      string
	MaxFileSize   int64
	SpoolMaxBytes int64
	Space         *spool.Space
}

// The ports the tests' fakes implement.
type (
	Messages        = messaging.Messages
	ActionTargets   = messaging.ActionTargets
	IncomingHistory = messaging.IncomingHistory
	testSession     = admin.Session
)

func (d testDeps) deps() Deps {
	out := Deps{
		Public: public.Deps{Started: d.Started, Pacing: d.Pacing, Metrics: d.Metrics, Pprof: d.Pprof},
		Messaging: messaging.Deps{Messages: d.Messages, Uploads: d.Uploads, Targets: d.Targets, Polls: d.Polls,
			Chats: d.Chats, Contacts: d.Contacts, Inbox: d.Inbox, Media: d.Media, Channels: d.Channels, Labels: d.Labels,
			Send: messaging.SendConfig{SpoolDir: d.Send.SpoolDir, MaxFileSize: d.Send.MaxFileSize, SpoolMaxBytes: d.Send.SpoolMaxBytes,
				Space: d.Send.Space},
			Groups: messaging.Groups{Admin: d.Groups, Actions: d.GroupActions},
			Events: messaging.Events{Log: d.Events, Heartbeat: d.EventsHeartbeat, WriteTimeout: d.EventsWriteTimeout,
				Streams: d.EventStreams, StreamsPerAddress: d.EventStreamsPerAddress}},
		Admin: admin.Deps{Session: d.Session, Pacing: d.Pacing, Analytics: d.Analytics, LogFiles: d.LogFiles,
			Webhooks: d.Webhooks, Subscriptions: d.Subscriptions},
		Dashboard:      d.Dashboard,
		Credentials:    Credentials{APIKey: d.Send.APIKey, AdminToken: d.AdminToken, Guard: d.Guard},
		Audit:          d.Audit,
		Now:            d.Now,
		Log:            d.Log,
		Limits:         d.Limits,
		TrustedProxies: d.TrustedProxies,
		CloudAPI:       d.CloudAPI,
		CloudAPIPaths:  d.CloudAPIPaths,
	}
	if d.Session != nil {
		out.Public.Link = d.Session
	}
	if d.Inbox != nil {
		out.Admin.Inbox = d.Inbox
	}
	if d.Keys != nil { // a nil *apikeys.Keys must stay a nil interface
		out.Credentials.Keys, out.Admin.Keys = d.Keys, d.Keys
	}
	out.Admin.Approvals = d.Approvals
	return out
}

func (d testDeps) router() http.Handler { return NewRouter(d.deps()) }

// More ports that tests implement.
type (
	DeliveryAnalytics = admin.DeliveryAnalytics
	EventLog          = messaging.EventLog
	GroupAdmin        = messaging.GroupAdmin
)
