package admin

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// auditEntry is one record as the API returns it.
type auditEntry struct {
	ID      string `json:"id"`
	Time    string `json:"time"`
	Action  string `json:"action"`
	Outcome string `json:"outcome"`
	Client  string `json:"client"`
	Detail  string `json:"detail,omitempty"`
}

// listAudit is GET /api/admin/audit?week=YYYY-Www: the week's records,
// oldest first; [] for a valid week without records. Without ?week= it
// lists the current week. Reading is not itself audited.
func (s *server) listAudit(w http.ResponseWriter, r *http.Request) error {
	q, err := httpkit.StrictQuery(r, "week")
	if err != nil {
		return err
	}
	week := audit.WeekOf(s.Now())
	if v, ok := q["week"]; ok {
		if week, err = parseWeek(v); err != nil {
			return err
		}
	}
	entries, err := s.Audit.Trail.List(r.Context(), week)
	if err != nil {
		return bridge.Internal(bridge.CodeInternalError, "audit list failed; see the bridge's log", err)
	}
	out := make([]auditEntry, len(entries))
	for i, e := range entries {
		out[i] = auditEntry{ID: e.ID, Time: bridge.FormatTime(e.Time), Action: string(e.Action),
			Outcome: string(e.Outcome), Client: e.Client, Detail: e.Detail}
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

type auditDeleteResponse struct {
	ID      string `json:"id"`
	Week    string `json:"week"`
	Deleted bool   `json:"deleted"`
}

// deleteAudit is DELETE /api/admin/audit/{id}?week=YYYY-Www. The id is
// opaque: any id the week does not hold is a 404. The deletion is itself
// recorded, in the current week, as audit.delete; so is a refused one.
func (s *server) deleteAudit(w http.ResponseWriter, r *http.Request) error {
	week, err := parseAuditWeek(r)
	if err != nil {
		return s.Audit.RecordResult(r, audit.ActionAuditDelete, "", err)
	}
	id := mux.Vars(r)["id"]
	err = s.Audit.Trail.Delete(r.Context(), week, id)
	switch {
	case errors.Is(err, audit.ErrNotFound):
		err = bridge.Errorf(bridge.KindNotFound, bridge.CodeAuditRecordNotFound, "no audit record %s in %s", quoteID(id), week)
	case err != nil:
		err = bridge.Internal(bridge.CodeInternalError, "audit deletion failed; see the bridge's log", err)
	}
	if err := s.Audit.RecordResult(r, audit.ActionAuditDelete, "week="+week.String()+" id="+quoteID(id), err); err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, auditDeleteResponse{ID: id, Week: week.String(), Deleted: true})
}

// parseAuditWeek reads the required ?week=: IDs are per weekly database.
func parseAuditWeek(r *http.Request) (audit.Week, error) {
	q, err := httpkit.StrictQuery(r, "week")
	if err != nil {
		return audit.Week{}, err
	}
	v, ok := q["week"]
	if !ok {
		return audit.Week{}, bridge.Invalid(bridge.CodeInvalidWeek, "week is required: YYYY-Www")
	}
	return parseWeek(v)
}

func parseWeek(s string) (audit.Week, error) {
	week, err := audit.ParseWeek(s)
	if err != nil {
		return audit.Week{}, bridge.Invalid(bridge.CodeInvalidWeek, "%s", err.Error())
	}
	return week, nil
}

// quoteID shows a client's record id in a message or an audit detail: as
// it is when it is a short run of letters, digits, '-' and '_' (every id
// the log hands out), quoted and cut short otherwise, so that no input can
// forge a line or a field.
func quoteID(id string) string {
	plain := id != "" && len(id) <= 64
	for i := 0; plain && i < len(id); i++ {
		c := id[i]
		plain = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_'
	}
	if plain {
		return id
	}
	return strconv.QuoteToASCII(bridge.Truncate(id, 64))
}
