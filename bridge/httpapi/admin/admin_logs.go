package admin

import (
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/logging"
)

// LogFiles removes daily log files; *logging.Files implements it (closing a
// file still being written, so the next line recreates it).
type LogFiles interface {
	// Remove deletes the file of level for day's UTC date; an absent file
	// gives an error matching fs.ErrNotExist.
	Remove(day time.Time, level logging.Level) error
}

type logPurgeResponse struct {
	Date    string `json:"date"`
	Level   string `json:"level"`
	Deleted bool   `json:"deleted"`
}

// purgeLog is DELETE /api/admin/logs?date=YYYY-MM-DD&level=…: it deletes
// that day's file of that level; 404 when there is none. Every request,
// refused ones included, is audited as logs.purge; the raw input of a
// refused one is not stored.
func (s *server) purgeLog(w http.ResponseWriter, r *http.Request) error {
	day, level, err := parseLogPurge(r)
	if err != nil {
		return s.Audit.RecordResult(r, audit.ActionLogPurge, "", err)
	}
	date := day.Format(time.DateOnly)
	err = s.LogFiles.Remove(day, level)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = bridge.Errorf(bridge.KindNotFound, bridge.CodeLogNotFound, "no %s log file for %s", level, date)
	case err != nil:
		err = bridge.Internal(bridge.CodeInternalError, "log purge failed; see the bridge's log", err)
	}
	if err := s.Audit.RecordResult(r, audit.ActionLogPurge, "date="+date+" level="+level.String(), err); err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, logPurgeResponse{Date: date, Level: level.String(), Deleted: true})
}

func parseLogPurge(r *http.Request) (time.Time, logging.Level, error) {
	q, err := httpkit.StrictQuery(r, "date", "level")
	if err != nil {
		return time.Time{}, 0, err
	}
	day, err := httpkit.ParseDate(q["date"])
	if err != nil {
		return time.Time{}, 0, err
	}
	level, err := httpkit.ParseLevel(q["level"])
	if err != nil {
		return time.Time{}, 0, err
	}
	return day, level, nil
}
