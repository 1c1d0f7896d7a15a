// Package admin is the HTTP API for the operator: the link's session
// (/session/*: pairing, groups, logout) and /api/admin/* (the state the
// operator mirrors, logs, the audit log, delivery analytics, failed and
// replayed webhooks, subscriptions), behind the admin token. The
// dashboard's data API mounts the same handlers under its own prefix,
// behind its signed-in session.
package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/inbox"
)

// Deps is what the admin handlers use: ports, not stores.
type Deps struct {
	// Session is the WhatsApp link.
	Session Session
	// Pacing shows the send queue in the admin state; nil leaves it out.
	Pacing httpkit.Pacing
	// Analytics counts deliveries per day.
	Analytics DeliveryAnalytics
	// LogFiles are the daily log files the purge endpoint deletes.
	LogFiles LogFiles
	// Webhooks holds the webhook events whose delivery gave up.
	Webhooks DeadLetters
	// Subscriptions are the receivers of the events, managed under
	// /api/admin/subscriptions; nil leaves those routes out.
	Subscriptions Subscriptions
	// Inbox replays the incoming history's webhook events
	// (POST /api/admin/webhooks/replay).
	Inbox Replayer
	// Keys are the scoped API keys, managed under /api/admin/keys; nil
	// leaves those routes out.
	Keys KeyAdmin
	// Approvals are the sends held for approval, decided under
	// /api/admin/approvals; nil leaves those routes out.
	Approvals Approvals
}

// Replayer enqueues the webhook events received since then again, under
// their original webhook-ids, for subscription (empty: every enabled one).
type Replayer interface {
	Replay(ctx context.Context, since time.Time, subscription string) (inbox.Replayed, error)
}

// server is the admin API: its handlers are its methods.
type server struct {
	Deps
	httpkit.Common
}

func newServer(d Deps, c httpkit.Common) *server {
	c.Now = c.Clock()
	return &server{Deps: d, Common: c}
}

// Mount adds /session/* and /api/admin/* to r, behind the admin token
// (GET /session/status needs none).
func Mount(r *mux.Router, d Deps, c httpkit.Common) {
	s := newServer(d, c)
	r.Handle("/session/status", s.Handler(s.sessionStatus)).Methods(httpkit.Get)
	r.Handle("/session/qr", s.Audited(audit.ActionPairingQR, s.sessionQR)).Methods(httpkit.Get)
	r.Handle("/session/pairing-code", s.Audited(audit.ActionPairingCode, s.sessionPairingCode)).Methods(httpkit.Post)
	r.Handle("/session/groups", s.Admin(s.sessionGroups)).Methods(httpkit.Get)
	r.Handle("/session/logout", s.Audited(audit.ActionLogout, s.sessionLogout)).Methods(httpkit.Post)
	s.routes(r, "/api/admin", httpkit.Guarded{Admin: s.Admin, Audited: s.Audited})
}

// MountUnder adds the admin operations to r under prefix, each behind
// guard: the dashboard's data API serves them to its signed-in browser.
func MountUnder(r *mux.Router, prefix string, d Deps, c httpkit.Common, guard httpkit.Guarded) {
	newServer(d, c).routes(r, prefix, guard)
}

// routes are the admin operations under prefix.
func (s *server) routes(r *mux.Router, prefix string, g httpkit.Guarded) {
	r.Handle(prefix+"/state", g.Admin(s.adminState)).Methods(httpkit.Get)
	r.Handle(prefix+"/logs", g.Admin(s.purgeLog)).Methods(httpkit.Del)
	r.Handle(prefix+"/audit", g.Admin(s.listAudit)).Methods(httpkit.Get)
	r.Handle(prefix+"/audit/{id}", g.Admin(s.deleteAudit)).Methods(httpkit.Del)
	r.Handle(prefix+"/webhooks/failed", g.Admin(s.listDeadLetters)).Methods(httpkit.Get)
	r.Handle(prefix+"/webhooks/{id}/redeliver", g.Audited(audit.ActionWebhookRedeliver, s.redeliver)).Methods(httpkit.Post)
	r.Handle(prefix+"/webhooks/replay", g.Audited(audit.ActionWebhookReplay, s.replay)).Methods(httpkit.Post)
	r.Handle(prefix+"/analytics/delivery", g.Admin(s.deliveryAnalytics)).Methods(httpkit.Get)
	if s.Subscriptions != nil {
		s.subscriptionRoutes(r, prefix, g)
	}
	if s.Keys != nil {
		s.keyRoutes(r, prefix, g)
	}
	if s.Approvals != nil {
		s.approvalRoutes(r, prefix, g)
	}
}

func (s *server) subscriptionRoutes(r *mux.Router, prefix string, g httpkit.Guarded) {
	r.Handle(prefix+"/subscriptions", g.Admin(s.listSubscriptions)).Methods(httpkit.Get)
	r.Handle(prefix+"/subscriptions", g.Audited(audit.ActionSubscriptionCreate, s.createSubscription)).Methods(httpkit.Post)
	r.Handle(prefix+"/subscriptions/{id}", g.Admin(s.getSubscription)).Methods(httpkit.Get)
	r.Handle(prefix+"/subscriptions/{id}", g.Audited(audit.ActionSubscriptionPut, s.putSubscription)).Methods(http.MethodPut)
	r.Handle(prefix+"/subscriptions/{id}", g.Audited(audit.ActionSubscriptionDelete, s.deleteSubscription)).Methods(httpkit.Del)
}
