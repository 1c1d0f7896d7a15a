package messaging

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// FuzzMessageJSON feeds arbitrary bodies to the JSON door's reading and
// the one validation (without an upload store). It must never panic; a
// refusal is a client error with a code, and an accepted message carries
// what its type needs.
func FuzzMessageJSON(f *testing.F) {
	f.Add(`{"to":"4915100000002","type":"text","text":"hi","reply_to":"3EB0AA","mentions":["4915100000003"]}`)
	f.Add(`{"to":"4915100000002","type":"location","location":{"latitude":1.5,"longitude":-2,"name":"x"}}`)
	f.Add(`{"to":"1@g.us","type":"contact","contact":{"vcard":"BEGIN:VCARD\nVERSION:3.0\nFN:A\nEND:VCARD"}}`)
	f.Add(`{"to":"4915100000002","type":"audio","media":{"upload_id":"u","ptt":true}}`)
	f.Add(`{"to":1}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/api/messages", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var m messageRequestJSON
		err := httpkit.DecodeJSONMax(httptest.NewRecorder(), r, &m, MaxMessageJSON)
		var d sendqueue.Draft
		if err == nil {
			d, err = m.draft()
		}
		var req sendqueue.Request
		if err == nil {
			req, err = d.Validate()
		}
		if err != nil {
			if e := bridge.ErrorOf(err); httpkit.StatusOf(e) < 400 || httpkit.StatusOf(e) >= 500 || e.Code == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		it := req.Items[0]
		switch it.Type {
		case bridge.TypeText:
			if strings.TrimSpace(it.Text) == "" {
				t.Fatal("an empty text was accepted")
			}
		case bridge.TypeLocation:
			if it.Location == nil || bridge.ValidateLocation(*it.Location) != nil {
				t.Fatalf("location %+v", it.Location)
			}
		case bridge.TypeContact:
			if it.Contact == nil {
				t.Fatal("a contact without its card")
			}
		default:
			t.Fatalf("type %s accepted without its file", it.Type) // no upload store here
		}
	})
}
