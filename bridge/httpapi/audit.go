package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/audit"
)

// auditEntry is one record as the API returns it.
type auditEntry struct {
	ID      int64  `json:"id"`
	Time    string `json:"time"`
	Action  string `json:"action"`
	Outcome string `json:"outcome"`
	Client  string `json:"client"`
	Detail  string `json:"detail,omitempty"`
}

// AuditListHandler serves GET /api/admin/audit?week=YYYY-Www: the week's
// records, oldest first; [] for a valid week without records. Without
// ?week= it lists the current week. Reading is not itself audited.
func AuditListHandler(log *audit.Log, now func() time.Time, logger logr.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := strictQuery(r, "week")
		if err != nil {
			writeFailure(w, logger, "audit list", err)
			return
		}
		week := audit.WeekOf(now())
		if s, ok := q["week"]; ok {
			if week, err = parseWeek(s); err != nil {
				writeFailure(w, logger, "audit list", err)
				return
			}
		}
		entries, err := log.List(r.Context(), week)
		if err != nil {
			writeFailure(w, logger, "audit list", err)
			return
		}
		out := make([]auditEntry, len(entries))
		for i, e := range entries {
			out[i] = auditEntry{ID: e.ID, Time: e.Time.UTC().Format(timestampLayout), Action: string(e.Action),
				Outcome: string(e.Outcome), Client: e.Client, Detail: e.Detail}
		}
		Write(w, http.StatusOK, out)
	})
}

type auditDeleteResponse struct {
	ID      int64  `json:"id"`
	Week    string `json:"week"`
	Deleted bool   `json:"deleted"`
}

// AuditDeleteHandler serves DELETE /api/admin/audit/{id}?week=YYYY-Www (the
// route's variable must be named "id"); 404 when the week holds no such
// record. The deletion is itself recorded, in the current week, as
// audit.delete; so is a refused one.
func AuditDeleteHandler(rec AuditRecorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		week, id, err := parseAuditDelete(r)
		if err != nil {
			rec.Record(r, audit.ActionAuditDelete, audit.OutcomeRejected, "")
			writeFailure(w, rec.Logger, "audit deletion", err)
			return
		}
		detail := "week=" + week.String() + " id=" + strconv.FormatInt(id, 10)
		err = rec.Log.Delete(r.Context(), week, id)
		switch {
		case errors.Is(err, audit.ErrNotFound):
			rec.Record(r, audit.ActionAuditDelete, audit.OutcomeNotFound, detail)
			Error(w, http.StatusNotFound, "audit_record_not_found", "no audit record "+strconv.FormatInt(id, 10)+" in "+week.String())
		case err != nil:
			rec.Record(r, audit.ActionAuditDelete, audit.OutcomeFailure, detail)
			writeFailure(w, rec.Logger, "audit deletion", err)
		default:
			rec.Record(r, audit.ActionAuditDelete, audit.OutcomeSuccess, detail)
			Write(w, http.StatusOK, auditDeleteResponse{ID: id, Week: week.String(), Deleted: true})
		}
	})
}

func parseAuditDelete(r *http.Request) (audit.Week, int64, error) {
	q, err := strictQuery(r, "week")
	if err != nil {
		return audit.Week{}, 0, err
	}
	// The week is required: IDs are per weekly database.
	s, ok := q["week"]
	if !ok {
		return audit.Week{}, 0, invalidQuery("invalid_week", "week is required: YYYY-Www")
	}
	week, err := parseWeek(s)
	if err != nil {
		return audit.Week{}, 0, err
	}
	id, err := parseID(mux.Vars(r)["id"])
	if err != nil {
		return audit.Week{}, 0, err
	}
	return week, id, nil
}

func parseWeek(s string) (audit.Week, error) {
	week, err := audit.ParseWeek(s)
	if err != nil {
		return audit.Week{}, invalidQuery("invalid_week", err.Error())
	}
	return week, nil
}
