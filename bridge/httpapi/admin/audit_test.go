package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// A slash or a bare ".." in the ID never reaches the handler through
// gorilla/mux (it cleans the path, redirecting, and {id} matches within one
// segment); should a router ever pass one (UseEncodedPath), it names no
// record either, and the detail shows it quoted.
func TestAuditDeletePathLikeIDs(t *testing.T) {
	now := func() time.Time { return saturday }
	trail := openAuditLog(t, now)
	s := newServer(Deps{}, httpkit.Common{Now: now, Audit: httpkit.AuditRecorder{Trail: trail, Logger: logr.Discard()}, Log: logr.Discard()})
	for _, id := range []string{"..", "1/2", "../1", "1%2F2", ".", "a\nb"} {
		r := httptest.NewRequest(http.MethodDelete, "/api/admin/audit/x?week=2026-W47", nil)
		r = mux.SetURLVars(r, map[string]string{"id": id})
		w := httptest.NewRecorder()
		s.Handler(s.deleteAudit).ServeHTTP(w, r)
		if w.Code != http.StatusNotFound || errorCode(t, w.Body.String()) != "audit_record_not_found" {
			t.Errorf("handler, id %q: %d %s", id, w.Code, w.Body)
		}
	}
	entries, err := trail.List(context.Background(), audit.WeekOf(saturday))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range entries {
		if _, id, _ := strings.Cut(a.Detail, " id="); !strings.HasPrefix(id, `"`) {
			t.Errorf("detail %q: the id is not quoted", a.Detail)
		}
	}
}
