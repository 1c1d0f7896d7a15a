package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestErrorShape(t *testing.T) {
	w := httptest.NewRecorder()
	Error(w, http.StatusBadRequest, "invalid_days", "days must be a whole number from 1 to 366")
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
