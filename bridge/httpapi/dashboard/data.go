package dashboard

import (
	"net/http"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
)

// DataAPIPrefix is where DataAPI answers: under /dashboard/, so that the
// browser sends the dashboard's session cookie (its path) and nothing of
// the API's credentials.
const DataAPIPrefix = "/dashboard/api"

// DataDeps is what the dashboard's data API reads: the admin and the
// messaging API's ports, the audit log its changes are recorded in.
type DataDeps struct {
	Admin     admin.Deps
	Messaging messaging.Deps
	Audit     httpkit.AuditRecorder
	Log       logr.Logger
}

// DataAPI is what the dashboard's pages read and do, the API's own
// handlers over the same ports, under DataAPIPrefix:
//
//	GET    /state, /analytics/delivery, /subscriptions, /webhooks/failed, /audit
//	GET    /messages (?direction=…&chat=…: what each sent message said too), /media/{id}
//	GET    /calls (the latest calls and blocks), /blocklist
//	GET    /labels (with the chats each is on), /channels (the channels followed or owned)
//	POST   /webhooks/{id}/redeliver, /webhooks/replay, /contacts/{number}/block
//	DELETE /logs, /audit/{id}, /contacts/{number}/block
//
// It checks no credential: the dashboard serves it only to a signed-in
// browser, and the changes only with the session's CSRF token. Answers are
// never cached, media included (its files are other people's messages).
func DataAPI(d DataDeps) http.Handler {
	c := httpkit.Common{Log: d.Log, Audit: d.Audit}
	r := httpkit.NewMux(d.Log)
	admin.MountUnder(r, DataAPIPrefix, d.Admin, c, httpkit.Guarded{Admin: c.Handler,
		Audited: func(action audit.Action, h httpkit.HandlerFunc) http.Handler {
			return c.Audit.Middleware(action, c.Handler(h))
		}})
	messaging.MountDashboardReads(r, DataAPIPrefix, d.Messaging, c)
	return httpkit.NoStore(r) // the client's address is resolved already: the dashboard is served inside NewRouter
}
