package cloudapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// anyKey is a credential check that lets every request pass.
func anyKey(http.ResponseWriter, *http.Request, string) (bridge.Caller, error) {
	return bridge.Owner(), nil
}

func translateJSON(t testing.TB, body string) (apiMessage, error) {
	var m cloudMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return apiMessage{}, err
	}
	// No use case: a translation calls none (links are refused before a
	// fetch, no host being allowed).
	d := New(Config{CheckKey: anyKey})
	return d.translate(httptest.NewRequest(http.MethodPost, "/v21.0/1/messages", nil), m)
}

func TestTranslate(t *testing.T) {
	for _, c := range []struct {
		body, bridgeCode string
		want             func(apiMessage) bool
	}{
		{`{"to":"1","type":"text","text":{"body":"hi"},"context":{"message_id":"3EB0"}}`, "",
			func(m apiMessage) bool { return m.Type == "text" && m.Text == "hi" && *m.ReplyTo == "3EB0" }},
		{`{"type":"text","context":null,"text":{"body":"hi"}}`, "", func(m apiMessage) bool { return m.ReplyTo == nil }},
		{`{"type":"sticker","sticker":{"id":"u1"}}`, "", func(m apiMessage) bool { return m.Type == "image" && m.Media.UploadID == "u1" }},
		{`{"type":"audio","audio":{"id":"u1","caption":"dropped"}}`, "", func(m apiMessage) bool { return m.Text == "" }},
		{`{"type":"interactive","interactive":{"type":"button","header":{"type":"text","text":"Order 17"},"body":{"text":"Deliver today?"},
			"footer":{"text":"Shop"},"action":{"buttons":[{"type":"reply","reply":{"id":"y","title":"Yes"}}]}}}`, "",
			func(m apiMessage) bool {
				return m.Type == "buttons" && m.Text == "*Order 17*\n\nDeliver today?\n\n_Shop_" && len(m.Buttons) == 1 && m.Buttons[0] == apiButton{"y", "Yes"}
			}},
		{`{"type":"interactive","interactive":{"type":"list","body":{"text":"Pick"},"action":{"button":"See","sections":[{"rows":[{"id":"1","title":"Tea"}]}]}}}`,
			codeUnsupportedInteractive, nil},
		{`{"type":"contacts","contacts":[{"name":{"formatted_name":"A;B"},"phones":[{"phone":"+1 2","wa_id":"12","type":"WORK"}]}]}`, "",
			func(m apiMessage) bool {
				return m.Type == "contact" && strings.Contains(m.Contact.VCard, "FN:A\\;B\n") && strings.Contains(m.Contact.VCard, "TEL;type=WORK;waid=12:+1 2")
			}},
		{`{"type":"contacts","contacts":"[{\"name\":{\"formatted_name\":\"Str\"}}]"}`, "",
			func(m apiMessage) bool { return strings.Contains(m.Contact.VCard, "FN:Str\n") }},
		{`{"type":"image","image":{"id":"a","link":"http://x"}}`, "invalid_media", nil},
		{`{"type":"image"}`, "missing_file", nil},
		{`{"type":"image","image":{"link":"http://not.allowed/a.png"}}`, "media_host_not_allowed", nil},
		{`{"type":"video","video":{"link":"file:///etc/passwd"}}`, "invalid_link", nil},
		{`{"type":"contacts","contacts":[{},{}]}`, "too_many_contacts", nil},
		{`{"type":"interactive","interactive":{"type":"flow","body":{"text":"x"}}}`, codeUnsupportedInteractive, nil},
		{`{"type":"template","template":{"name":"x","language":{"code":"en"}}}`, "template_not_found", nil},
		{`{"type":"poll"}`, "unknown_type", nil},
		{`{}`, "missing_type", nil},
	} {
		m, err := translateJSON(t, c.body)
		switch {
		case c.want != nil && (err != nil || !c.want(m)):
			t.Errorf("%s: %+v %v", c.body, m, err)
		case c.want == nil && fromBridge(err).BridgeCode != c.bridgeCode:
			t.Errorf("%s: %v, want %s", c.body, err, c.bridgeCode)
		}
	}
}

func TestTemplateRender(t *testing.T) {
	tpl := Template{Components: []tplComponent{{Type: "HEADER", Text: "Order {{1}}"}, {Type: "BODY", Text: "Hi {{1}}, total {{2}}"},
		{Type: "BUTTONS"}}}
	use := func(header, body []tplParam) *templateUse {
		u := &templateUse{}
		u.Components = append(u.Components, struct {
			Type       string     `json:"type"`
			Parameters []tplParam `json:"parameters"`
		}{"header", header}, struct {
			Type       string     `json:"type"`
			Parameters []tplParam `json:"parameters"`
		}{"body", body})
		return u
	}
	cur := tplParam{Type: "currency"}
	cur.Currency = &struct {
		FallbackValue string `json:"fallback_value"`
	}{"$5"}
	got, err := tpl.render(use([]tplParam{{Text: "42"}}, []tplParam{{Text: "Ana"}, cur}))
	if err != nil || got != "Order 42\n\nHi Ana, total $5" {
		t.Errorf("render: %q %v", got, err)
	}
	if _, err := tpl.render(use(nil, []tplParam{{Text: "Ana"}})); fromBridge(err).Code != CodeTemplateParams {
		t.Errorf("too few parameters: %v", err)
	}
}

func TestGraphErrorOfBridgeErrors(t *testing.T) {
	for _, c := range []struct {
		err          error
		status, code int
	}{
		{bridge.Invalid("invalid_number", "x"), 400, CodeInvalidParameter},
		{bridge.ErrNotOnWhatsApp, 400, CodeNotOnWhatsApp},
		{bridge.Errorf(bridge.KindUnavailable, "not_linked", "x"), 503, CodeServiceDown},
		{bridge.Errorf(bridge.KindRateLimited, "too_many", "x"), 429, CodeRateLimit},
		{bridge.Errorf(bridge.KindUnauthorized, "unauthorized", "x"), 401, CodeAccessToken},
		{bridge.Internal("store_failed", "x", nil), 500, CodeGeneric},
	} {
		if g := fromBridge(c.err); g.status != c.status || g.Code != c.code {
			t.Errorf("%v: %d %d", c.err, g.status, g.Code)
		}
	}
}

// FuzzTranslate: any body is a message or Graph's error, never a panic.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{`{"type":"text","text":{"body":"x"}}`, `{"type":"interactive","interactive":{"type":"button","body":{"text":"a"},"action":{"buttons":[{"type":"reply","reply":{"id":"i","title":"b"}}]}}}`,
		`{"type":"contacts","contacts":[{"name":{"first_name":"a"},"emails":[{"email":"a@b"}],"org":{"company":"c"}}]}`,
		`{"type":"image","image":{"link":"http://h/x"}}`, `{"type":"template","template":{}}`, `{"type":"location","location":{}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if _, err := translateJSON(t, body); err != nil && fromBridge(err).status == 0 {
			t.Errorf("%q: %v has no Graph status", body, err)
		}
	})
}

// to takes digits (with a +), and as extensions a group or a LID, which
// the answer's wa_id repeats.
func TestWaID(t *testing.T) {
	for in, want := range map[string]string{"+49 151 0000002": "491510000002", "4915100000002": "4915100000002",
		"120363025246125486@g.us": "120363025246125486@g.us", "123456789@lid": "123456789@lid"} {
		if got := waID(in); got != want {
			t.Errorf("waID(%q) = %q, want %q", in, got, want)
		}
	}
}
