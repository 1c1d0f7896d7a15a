package httpkit

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/msgbridge/msgbridge/bridge"
)

func TestErrorShape(t *testing.T) {
	w := httptest.NewRecorder()
	WriteError(w, logr.Discard(), bridge.Invalid("invalid_days", "days must be a whole number from 1 to 366"))
	if w.Code != http.StatusBadRequest {
		t.Errorf("status %d", w.Code)
	}
	if got, want := w.Body.String(), `{"error":{"code":"invalid_days","message":"days must be a whole number from 1 to 366"}}`+"\n"; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	for h, want := range map[string]string{"Content-Type": "application/json; charset=utf-8", "X-Content-Type-Options": "nosniff"} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
}

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{bridge.Invalid("x", "x"), 400},
		{bridge.ErrUnauthorized, 401},
		{bridge.Errorf(bridge.KindForbidden, "x", "x"), 403},
		{bridge.Errorf(bridge.KindNotFound, "x", "x"), 404},
		{bridge.ErrLinked, 409},
		{bridge.Errorf(bridge.KindTooLarge, "x", "x"), 413},
		{bridge.Errorf(bridge.KindUnsupported, "x", "x"), 415},
		{bridge.Errorf(bridge.KindRateLimited, "x", "x"), 429},
		{bridge.Internal("x", "x", errors.New("cause")), 500},
		{bridge.Errorf(bridge.KindUpstream, "x", "x"), 502},
		{bridge.ErrNotLinked, 503},
		{bridge.Errorf(bridge.KindTimeout, "x", "x"), 504},
		{bridge.Errorf(bridge.KindInsufficientStorage, "x", "x"), 507},
		{errors.New("plain"), 500},
		{bridge.Errorf(bridge.Kind(999), "x", "x"), 500},
	} {
		if got := StatusOf(c.err); got != c.want {
			t.Errorf("StatusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// An error that is not a *bridge.Error, and the cause of an internal one,
// reach the log and never the client.
func TestInternalErrorsRevealNothing(t *testing.T) {
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	for _, err := range []error{
		errors.New("open /data/bridge.db: disk I/O error"),
		bridge.Internal("store_failed", "the request could not be stored", errors.New("open /data/bridge.db: disk I/O error")),
	} {
		logged = nil
		w := httptest.NewRecorder()
		WriteError(w, log, err)
		if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "bridge.db") {
			t.Errorf("%v answered %d %s", err, w.Code, w.Body)
		}
		if len(logged) != 1 || !strings.Contains(logged[0], "disk I/O error") {
			t.Errorf("%v: logged %q", err, logged)
		}
	}
}
