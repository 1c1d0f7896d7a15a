package messaging

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// FuzzParseListQuery: a query string is accepted with values in their
// bounds, or refused with one of the documented codes.
func FuzzParseListQuery(f *testing.F) {
	for _, q := range []string{"direction=in&limit=2", "direction=out&status=Read", "direction=in&status=Read", "direction=x",
		"since=2026-11-21T10:00:00Z&cursor=abc", "limit=0", "%zz", "direction=in&direction=in", "apiKey=k&direction=in",
		"chat=%2B4915112345678&direction=in", "chat=120363025246125486@g.us", "chat=99887766@lid", "chat=a@b", "chat="} {
		f.Add(q)
	}
	codes := map[string]bool{"invalid_query": true, "invalid_direction": true, "invalid_status": true, "invalid_since": true,
		"invalid_limit": true, "invalid_cursor": true, "invalid_chat": true}
	f.Fuzz(func(t *testing.T, raw string) {
		r := &http.Request{URL: &url.URL{RawQuery: raw}}
		q, err := parseListQuery(r)
		if err != nil {
			var e *bridge.Error
			if !errors.As(err, &e) || e.Kind != bridge.KindInvalid || !codes[e.Code] {
				t.Fatalf("%q: error %v", raw, err)
			}
			return
		}
		if q.Limit < 1 || q.Limit > MaxPageSize || (q.incoming && q.Status != "") {
			t.Fatalf("%q accepted as %+v", raw, q)
		}
		values, _ := url.ParseQuery(raw)
		if q.incoming != (values.Get("direction") == "in") {
			t.Fatalf("%q: incoming %v", raw, q.incoming)
		}
		if chat := values.Get("chat"); q.Chat.IsZero() != (chat == "") || (chat != "" && q.Chat.JID() == "") {
			t.Fatalf("%q: chat %+v", raw, q.Chat)
		}
	})
}
