package httpkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/audit"
)

func TestRecorderMiddleware(t *testing.T) {
	l := openAuditLog(t, func() time.Time { return saturday })
	rec := AuditRecorder{Trail: l, Logger: logr.Discard()}
	mux := http.NewServeMux()
	mux.Handle("/ok", rec.Middleware(audit.ActionLogout, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("{}"))
	})))
	mux.Handle("/conflict", rec.Middleware(audit.ActionPairingQR, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusConflict)
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range []string{"/ok", "/conflict"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, nil)
		req.Header.Set("X-Forwarded-For", "203.0.113.9") // not trusted
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	entries, err := l.List(context.Background(), audit.WeekOf(saturday))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("entries %v", entries)
	}
	for i, want := range []struct {
		action  audit.Action
		outcome audit.Outcome
	}{{audit.ActionLogout, audit.OutcomeSuccess}, {audit.ActionPairingQR, audit.OutcomeRejected}} {
		e := entries[i]
		if e.Action != want.action || e.Outcome != want.outcome || e.Client != "127.0.0.1" {
			t.Errorf("entry %d: %+v, want %v %v from 127.0.0.1", i, e, want.action, want.outcome)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	for status, want := range map[int]audit.Outcome{200: audit.OutcomeSuccess, 204: audit.OutcomeSuccess, 400: audit.OutcomeRejected,
		401: audit.OutcomeRejected, 404: audit.OutcomeNotFound, 409: audit.OutcomeRejected, 500: audit.OutcomeFailure, 503: audit.OutcomeFailure} {
		if got := OutcomeOf(status); got != want {
			t.Errorf("OutcomeOf(%d) = %s, want %s", status, got, want)
		}
	}
}
