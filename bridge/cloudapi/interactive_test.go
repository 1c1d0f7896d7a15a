package cloudapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// Reply buttons as the tools send them become the bridge's buttons
// message; every other kind and every field out of Cloud's bounds is
// refused with Cloud's error for it and the fault's own code.
func TestReplyButtons(t *testing.T) {
	for _, c := range []struct {
		name, interactive string
		text              string
		buttons           []apiButton
	}{
		// Chatwoot's input_select (Whatsapp::Providers::BaseService): the
		// action as a JSON string.
		{"chatwoot", `{"type":"button","body":{"text":"Pick one"},"action":"{\"buttons\":[{\"type\":\"reply\",\"reply\":{\"id\":\"sales\",\"title\":\"Talk to sales\"}},{\"type\":\"reply\",\"reply\":{\"id\":\"support\",\"title\":\"Support\"}}]}"}`,
			"Pick one", []apiButton{{"sales", "Talk to sales"}, {"support", "Support"}}},
		{"chatwoot in Portuguese", `{"type":"button","body":{"text":"Posso ajudar?"},"action":"{\"buttons\":[{\"type\":\"reply\",\"reply\":{\"id\":\"Não\",\"title\":\"Não\"}}]}"}`,
			"Posso ajudar?", []apiButton{{"Não", "Não"}}},
		// Typebot's choice input (convertInputToWhatsAppMessage.ts): "―" as
		// the body of a later group, titles cut to 20 characters.
		{"typebot", `{"type":"button","body":{"text":"―"},"action":{"buttons":[{"type":"reply","reply":{"id":"cm1x9k2a40001","title":"A very long option.."}}]}}`,
			"―", []apiButton{{"cm1x9k2a40001", "A very long option.."}}},
		{"header and footer", `{"type":"button","header":{"type":"text","text":"Order 17"},"body":{"text":"Deliver today?"},"footer":{"text":"Shop"},
			"action":{"buttons":[{"type":"reply","reply":{"id":"y","title":"Yes"}},{"type":"reply","reply":{"id":"n","title":"No"}},{"type":"reply","reply":{"id":"l","title":"Later"}}]}}`,
			"*Order 17*\n\nDeliver today?\n\n_Shop_", []apiButton{{"y", "Yes"}, {"n", "No"}, {"l", "Later"}}},
		{"twenty characters", `{"type":"button","body":{"text":"` + strings.Repeat("b", 1024) + `"},"action":{"buttons":[{"type":"reply","reply":{"id":"` +
			strings.Repeat("i", 256) + `","title":"` + strings.Repeat("é", 20) + `"}}]}}`,
			strings.Repeat("b", 1024), []apiButton{{strings.Repeat("i", 256), strings.Repeat("é", 20)}}},
	} {
		text, buttons, err := parseInteractive([]byte(c.interactive))
		if err != nil || text != c.text || !equalButtons(buttons, c.buttons) {
			t.Errorf("%s: %q %v %v", c.name, text, buttons, err)
		}
	}
}

func TestReplyButtonsRefusals(t *testing.T) {
	button := func(id, title string) string {
		return `{"type":"reply","reply":{"id":"` + id + `","title":"` + title + `"}}`
	}
	buttons := func(b ...string) string { return `"action":{"buttons":[` + strings.Join(b, ",") + `]}` }
	ok := buttons(button("y", "Yes"))
	for _, c := range []struct {
		interactive string
		code        int
		bridgeCode  string
	}{
		{`null`, CodeParamMissing, codeMissingInteractive},
		{`{"body":{"text":"x"},` + ok + `}`, CodeParamMissing, codeUnknownInteractive},
		{`{"type":"list","body":{"text":"x"},"action":{"button":"Menu","sections":[{"rows":[{"id":"a","title":"A"}]}]}}`, CodeUnsupportedType, codeUnsupportedInteractive},
		{`{"type":"cta_url","body":{"text":"x"},"action":{"name":"cta_url","parameters":{"display_text":"Go","url":"https://x.test"}}}`, CodeUnsupportedType, codeUnsupportedInteractive},
		{`{"type":"flow","body":{"text":"x"},"action":{"name":"flow"}}`, CodeUnsupportedType, codeUnsupportedInteractive},
		{`{"type":"product","action":{"catalog_id":"1","product_retailer_id":"p"}}`, CodeUnsupportedType, codeUnsupportedInteractive},
		{`{"type":"product_list","body":{"text":"x"}}`, CodeUnsupportedType, codeUnsupportedInteractive},
		{`{"type":"catalog_message","body":{"text":"x"}}`, CodeUnsupportedType, codeUnsupportedInteractive},
		{`{"type":"buttons","body":{"text":"x"},` + ok + `}`, CodeParamInvalid, codeUnknownInteractive},
		{`{"type":"button",` + ok + `}`, CodeParamMissing, bridge.CodeEmptyText},
		{`{"type":"button","body":{"text":"  "},` + ok + `}`, CodeParamMissing, bridge.CodeEmptyText},
		{`{"type":"button","body":{"text":"` + strings.Repeat("b", 1025) + `"},` + ok + `}`, CodeParamInvalid, codeInvalidBody},
		{`{"type":"button","header":{"type":"image","image":{"link":"https://x.test/a.png"}},"body":{"text":"x"},` + ok + `}`, CodeUnsupportedType, codeUnsupportedHeader},
		{`{"type":"button","header":{"type":"text","text":"` + strings.Repeat("h", 61) + `"},"body":{"text":"x"},` + ok + `}`, CodeParamInvalid, codeInvalidHeader},
		{`{"type":"button","header":{"type":"text"},"body":{"text":"x"},` + ok + `}`, CodeParamInvalid, codeInvalidHeader},
		{`{"type":"button","header":{"type":"gif","text":"a"},"body":{"text":"x"},` + ok + `}`, CodeParamInvalid, codeInvalidHeader},
		{`{"type":"button","body":{"text":"x"},"footer":{"text":"` + strings.Repeat("f", 61) + `"},` + ok + `}`, CodeParamInvalid, codeInvalidFooter},
		{`{"type":"button","body":{"text":"x"},"footer":{},` + ok + `}`, CodeParamInvalid, codeInvalidFooter},
		{`{"type":"button","body":{"text":"x"}}`, CodeParamMissing, codeMissingAction},
		{`{"type":"button","body":{"text":"x"},"action":{"buttons":[]}}`, CodeParamMissing, codeMissingAction},
		{`{"type":"button","body":{"text":"x"},` + buttons(button("a", "A"), button("b", "B"), button("c", "C"), button("d", "D")) + `}`, CodeParamInvalid, bridge.CodeInvalidButtons},
		{`{"type":"button","body":{"text":"x"},"action":{"buttons":[{"reply":{"id":"a","title":"A"}}]}}`, CodeParamInvalid, codeInvalidButtonType},
		{`{"type":"button","body":{"text":"x"},` + buttons(button(" a", "A")) + `}`, CodeParamInvalid, bridge.CodeInvalidButtonID},
		{`{"type":"button","body":{"text":"x"},` + buttons(button(strings.Repeat("i", 257), "A")) + `}`, CodeParamInvalid, bridge.CodeInvalidButtonID},
		{`{"type":"button","body":{"text":"x"},` + buttons(button("", "A")) + `}`, CodeParamInvalid, bridge.CodeInvalidButtonID},
		{`{"type":"button","body":{"text":"x"},` + buttons(button("a", strings.Repeat("t", 21))) + `}`, CodeParamInvalid, bridge.CodeInvalidButtonTitle},
		{`{"type":"button","body":{"text":"x"},` + buttons(button("a", "")) + `}`, CodeParamInvalid, bridge.CodeInvalidButtonTitle},
		{`{"type":"button","body":{"text":"x"},` + buttons(button("a", "A"), button("a", "B")) + `}`, CodeParamInvalid, bridge.CodeDuplicateButton},
		{`{"type":"button","body":{"text":"x"},` + buttons(button("a", "A"), button("b", "A")) + `}`, CodeParamInvalid, bridge.CodeDuplicateButton},
	} {
		_, _, err := parseInteractive([]byte(c.interactive))
		g := fromBridge(err)
		if err == nil || g.status != http.StatusBadRequest || g.Code != c.code || g.BridgeCode != c.bridgeCode || g.ErrorData.Details == "" {
			t.Errorf("%s: %v (%d %d %s), want %d %s", c.interactive, err, g.status, g.Code, g.BridgeCode, c.code, c.bridgeCode)
		}
	}
}

// parseInteractive reads an interactive object as the door reads a
// message's, and checks it.
func parseInteractive(raw []byte) (string, []apiButton, error) {
	var m struct {
		Interactive *interactive `json:"interactive"`
	}
	if err := json.Unmarshal([]byte(`{"interactive":`+string(raw)+`}`), &m); err != nil {
		return "", nil, invalidParam("invalid_json", err.Error())
	}
	return replyButtons(m.Interactive)
}

func equalButtons(a, b []apiButton) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzParseInteractive: any interactive object is reply buttons within
// Cloud's bounds, or a Graph error of status 400, never a panic.
func FuzzParseInteractive(f *testing.F) {
	for _, s := range []string{
		`{"type":"button","body":{"text":"Pick"},"action":{"buttons":[{"type":"reply","reply":{"id":"a","title":"A"}}]}}`,
		`{"type":"button","header":{"type":"text","text":"H"},"body":{"text":"B"},"footer":{"text":"F"},"action":"{\"buttons\":[{\"type\":\"reply\",\"reply\":{\"id\":\"a\",\"title\":\"A\"}}]}"}`,
		`{"type":"list","body":{"text":"x"},"action":{"sections":[]}}`,
		`{"type":"button","header":{"type":"image","image":{"id":"1"}},"body":{"text":"x"},"action":{"buttons":[]}}`,
		`{"type":"button","body":{"text":"x"},"action":"not json"}`, `null`, `{}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		text, buttons, err := parseInteractive(raw)
		if err != nil {
			if g := fromBridge(err); g.status != http.StatusBadRequest || g.BridgeCode == "" {
				t.Errorf("%q: %v is not a Graph error of status 400 with its code", raw, err)
			}
			return
		}
		if strings.TrimSpace(text) == "" || utf8.RuneCountInString(text) > maxBodyRunes+maxHeaderRunes+maxFooterRunes+8 {
			t.Errorf("%q: text %q", raw, text)
		}
		checked := make([]bridge.Button, len(buttons))
		for i, b := range buttons {
			checked[i] = bridge.Button(b)
		}
		if err := bridge.ValidateButtons(checked); err != nil {
			t.Errorf("%q: accepted buttons the bridge refuses: %v", raw, err)
		}
	})
}
