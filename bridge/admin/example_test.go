package admin_test

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/admin"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/metrics"
	"github.com/msgbridge/msgbridge/bridge/settings"
)

// Example shows the wiring in the bridge's main and router (compiled, not
// run): the logger first, then the audit log, then the admin routes, each
// behind the router's admin-token check (requireAdmin here).
func Example() {
	var (
		ctx          = context.Background()
		logsDir      = "/data/logs"  // datadir's LogsDir()
		auditDir     = "/data/audit" // datadir's AuditDir()
		masterKey    = make([]byte, 32)
		bridgeDB     *sql.DB // bridgedb.Open(…)
		requireAdmin = func(h http.Handler) http.Handler { return h }
	)
	log, logFiles, err := logging.New(logging.Options{Stdout: os.Stdout, Dir: logsDir, Level: settings.LevelInfo})
	if err != nil {
		panic(err)
	}
	defer func() { _ = logFiles.Close() }()

	if err := audit.Verify(ctx, auditDir, masterKey); err != nil { // with the other databases' checks
		panic(err)
	}
	auditLog, err := audit.Open(auditDir, masterKey, time.Now)
	if err != nil {
		panic(err)
	}
	defer func() { _ = auditLog.Close() }()
	rec := audit.Recorder{Log: auditLog, Logger: log.WithName("audit")}

	m := metrics.New(metrics.Sources{SessionState: func() string { return "connected" }})

	r := mux.NewRouter()
	r.Handle("/api/admin/logs", requireAdmin(admin.LogsHandler(logFiles, rec))).Methods(http.MethodDelete)
	r.Handle("/api/admin/audit", requireAdmin(admin.AuditListHandler(auditLog, time.Now, log))).Methods(http.MethodGet)
	r.Handle("/api/admin/audit/{id}", requireAdmin(admin.AuditDeleteHandler(rec))).Methods(http.MethodDelete)
	r.Handle("/api/admin/analytics/delivery", requireAdmin(admin.DeliveryAnalyticsHandler(bridgeDB, time.Now, log))).Methods(http.MethodGet)
	r.Handle("/session/logout", requireAdmin(rec.Middleware(audit.ActionLogout, http.NotFoundHandler()))).Methods(http.MethodPost)
	r.Handle("/metrics", m.Handler()).Methods(http.MethodGet)
}
