package httpapi

import (
	"net/http"

	"github.com/msgbridge/msgbridge/bridge/audit"
)

// DashboardAPIPrefix is where DashboardAPI answers: under /dashboard/, so
// that the browser sends the dashboard's session cookie (its path) and
// nothing of the API's credentials.
const DashboardAPIPrefix = "/dashboard/api"

// DashboardAPI is what the dashboard's pages read and do, the API's own
// handlers over the same ports, under DashboardAPIPrefix:
//
//	GET    /state, /analytics/delivery, /subscriptions, /webhooks/failed, /audit
//	GET    /messages (?direction=…&chat=…), /media/{id}
//	POST   /webhooks/{id}/redeliver, /webhooks/replay
//	DELETE /logs, /audit/{id}
//
// It checks no credential: the dashboard serves it only to a signed-in
// browser, and the changes only with the session's CSRF token. Answers are
// never cached, media included (its files are other people's messages).
func DashboardAPI(d Deps) http.Handler {
	s := newServer(d)
	r := NewMux(d.Log)
	s.adminRoutes(r, DashboardAPIPrefix, s.handle, func(action audit.Action, h HandlerFunc) http.Handler {
		return s.Audit.Middleware(action, s.handle(h))
	})
	r.Handle(DashboardAPIPrefix+"/messages", s.handle(s.listMessages)).Methods(get)
	r.Handle(DashboardAPIPrefix+"/media/{id}", s.handle(s.getMedia)).Methods(get)
	return noStore(r) // the client's address is resolved already: the dashboard is served inside NewRouter
}

// noStore keeps a handler's answers out of every cache, whatever
// Cache-Control the handler set (the media endpoint's is private).
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(noStoreWriter{w}, r)
	})
}

type noStoreWriter struct{ http.ResponseWriter }

func (w noStoreWriter) WriteHeader(code int) {
	w.Header().Set("Cache-Control", "no-store")
	w.ResponseWriter.WriteHeader(code)
}

func (w noStoreWriter) Write(b []byte) (int, error) {
	w.Header().Set("Cache-Control", "no-store")
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w noStoreWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
