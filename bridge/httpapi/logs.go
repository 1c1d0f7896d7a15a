package httpapi

import (
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge/audit"
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

// LogsHandler serves DELETE /api/admin/logs?date=YYYY-MM-DD&level=…: it
// deletes that day's file of that level; 404 when there is none. Every
// request, refused ones included, is audited as logs.purge.
func LogsHandler(files LogFiles, rec AuditRecorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		day, level, err := parseLogPurge(r)
		if err != nil {
			rec.Record(r, audit.ActionLogPurge, audit.OutcomeRejected, "") // the raw input is not stored
			writeFailure(w, rec.Logger, "log purge", err)
			return
		}
		date := day.Format(time.DateOnly)
		detail := "date=" + date + " level=" + level.String()
		err = files.Remove(day, level)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			rec.Record(r, audit.ActionLogPurge, audit.OutcomeNotFound, detail)
			Error(w, http.StatusNotFound, "log_not_found", "no "+level.String()+" log file for "+date)
		case err != nil:
			rec.Record(r, audit.ActionLogPurge, audit.OutcomeFailure, detail)
			writeFailure(w, rec.Logger, "log purge", err)
		default:
			rec.Record(r, audit.ActionLogPurge, audit.OutcomeSuccess, detail)
			Write(w, http.StatusOK, logPurgeResponse{Date: date, Level: level.String(), Deleted: true})
		}
	})
}

func parseLogPurge(r *http.Request) (time.Time, logging.Level, error) {
	q, err := strictQuery(r, "date", "level")
	if err != nil {
		return time.Time{}, 0, err
	}
	day, err := parseDate(q["date"])
	if err != nil {
		return time.Time{}, 0, err
	}
	level, err := parseLevel(q["level"])
	if err != nil {
		return time.Time{}, 0, err
	}
	return day, level, nil
}
