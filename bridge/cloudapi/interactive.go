package cloudapi

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// Cloud's interactive messages through the door. Reply buttons go out as
// the bridge's own reply buttons (type buttons: a native-flow message of
// quick-reply buttons, which phones render when a linked device sends
// it), so a tap comes back as Cloud's interactive button_reply. Every
// other kind is refused with Cloud's error for an unsupported message
// type: none renders from a linked device, and sending one as something
// else (text, a poll) would tell the client it went out as it asked.

// Cloud's bounds of a reply buttons message's texts, in characters; the
// buttons' own bounds are the bridge's (bridge.ValidateButtons), which are
// Cloud's.
const (
	maxBodyRunes     = 1024
	maxHeaderRunes   = 60
	maxFooterRunes   = 60
	maxButtonIDRunes = bridge.MaxButtonIDBytes
)

// The door's own codes of interactive faults (msgbridge_code); the
// buttons' faults keep the bridge's codes.
const (
	codeMissingInteractive     = "missing_interactive"
	codeUnknownInteractive     = "unknown_interactive_type"
	codeUnsupportedInteractive = "unsupported_interactive"
	codeUnsupportedHeader      = "unsupported_header"
	codeInvalidHeader          = "invalid_header"
	codeInvalidFooter          = "invalid_footer"
	codeInvalidBody            = "invalid_body"
	codeInvalidButtonType      = "invalid_button_type"
	codeMissingAction          = "missing_action"
)

// unsupportedInteractive names every other kind of Cloud's interactive
// messages and why the door refuses it.
var unsupportedInteractive = map[string]string{
	"list": "WhatsApp renders no list sent from a linked device; send up to 3 reply buttons " +
		`(type "button"), a poll through the bridge's own API, or the rows numbered as text`,
	"cta_url":                  "WhatsApp renders no call-to-action button sent from a linked device; send the link in a text",
	"flow":                     "Flows are Meta's forms for business accounts and do not render from a linked device",
	"product":                  "products need a catalogue of a WhatsApp Business account, which a linked device has not",
	"product_list":             "products need a catalogue of a WhatsApp Business account, which a linked device has not",
	"catalog_message":          "a catalogue needs a WhatsApp Business account's commerce settings, which a linked device has not",
	"address_message":          "address messages are offered by Cloud in India only and do not render from a linked device",
	"location_request_message": "WhatsApp renders no location request sent from a linked device; ask for the location in a text",
	"call_permission_request":  "calls are not served by this bridge",
	"voice_call":               "calls are not served by this bridge",
	"carousel":                 "WhatsApp renders no carousel sent from a linked device",
}

// interactive is Cloud's interactive object.
type interactive struct {
	Type   string    `json:"type"`
	Header *iaHeader `json:"header"`
	Body   *textPart `json:"body"`
	Footer *textPart `json:"footer"`
	// Action may come as a JSON string holding the object: Chatwoot sends
	// JSON.generate of it, and Graph takes it.
	Action graphValue[*iaAction] `json:"action"`
}

type textPart struct {
	Text string `json:"text"`
}

// iaHeader is an interactive message's header: a text, or media the door
// cannot carry under buttons.
type iaHeader struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type iaAction struct {
	Buttons []iaButton `json:"buttons"`
}

type iaButton struct {
	Type  string `json:"type"`
	Reply struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"reply"`
}

// apiButton is one button of the bridge's own buttons message.
type apiButton struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// replyButtons reads a Cloud interactive message of reply buttons as the
// bridge's text and buttons, each field checked as Cloud checks it. The
// bridge's buttons message carries a text and buttons: a text header
// becomes the text's bold first line and a footer its italic last line.
func replyButtons(in *interactive) (string, []apiButton, error) {
	if in == nil {
		return "", nil, missingParam(codeMissingInteractive, "a message of type interactive needs the interactive object")
	}
	if err := supportedInteractive(in.Type); err != nil {
		return "", nil, err
	}
	text, err := in.text()
	if err != nil {
		return "", nil, err
	}
	buttons, err := in.buttons()
	if err != nil {
		return "", nil, err
	}
	return text, buttons, nil
}

// supportedInteractive refuses every kind but reply buttons.
func supportedInteractive(kind string) error {
	if kind == "button" {
		return nil
	}
	if kind == "" {
		return missingParam(codeUnknownInteractive, `the parameter interactive.type is required: "button" (reply buttons)`)
	}
	if why, known := unsupportedInteractive[kind]; known {
		return unsupportedType(codeUnsupportedInteractive, "interactive.type "+strconv.Quote(kind)+
			" is not sent by this bridge: "+why+`. Only reply buttons (interactive.type "button") render from a linked device.`)
	}
	return invalidValue(codeUnknownInteractive, "interactive.type "+strconv.Quote(bridge.Truncate(kind, 32))+
		` is not a Cloud interactive type; this bridge sends "button" (reply buttons)`)
}

// text is the body with the header above and the footer below it.
func (in *interactive) text() (string, error) {
	if in.Body == nil || strings.TrimSpace(in.Body.Text) == "" {
		return "", missingParam(bridge.CodeEmptyText, "the parameter interactive.body.text is required")
	}
	if !withinRunes(in.Body.Text, maxBodyRunes) {
		return "", invalidValue(codeInvalidBody, "interactive.body.text is longer than "+strconv.Itoa(maxBodyRunes)+" characters")
	}
	header, err := in.headerText()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if header != "" {
		b.WriteString("*" + header + "*\n\n")
	}
	b.WriteString(in.Body.Text)
	if in.Footer != nil {
		if strings.TrimSpace(in.Footer.Text) == "" || !withinRunes(in.Footer.Text, maxFooterRunes) {
			return "", invalidValue(codeInvalidFooter, "interactive.footer.text must be 1-"+strconv.Itoa(maxFooterRunes)+" characters")
		}
		b.WriteString("\n\n_" + in.Footer.Text + "_")
	}
	return b.String(), nil
}

// headerText is a text header's text; "" for none. A media header is
// refused: the bridge's buttons message carries no attachment.
func (in *interactive) headerText() (string, error) {
	h := in.Header
	switch {
	case h == nil:
		return "", nil
	case h.Type == "image" || h.Type == "video" || h.Type == "document":
		return "", unsupportedType(codeUnsupportedHeader, "a header of type "+h.Type+" is not sent under reply buttons by this bridge; "+
			"send the "+h.Type+" as its own message before the buttons, or give a text header")
	case h.Type != "text":
		return "", invalidValue(codeInvalidHeader, `interactive.header.type must be "text" (or image, video, document, which this bridge does not send)`)
	case strings.TrimSpace(h.Text) == "" || !withinRunes(h.Text, maxHeaderRunes):
		return "", invalidValue(codeInvalidHeader, "interactive.header.text must be 1-"+strconv.Itoa(maxHeaderRunes)+" characters")
	}
	return h.Text, nil
}

// buttons checks what Cloud asks of reply buttons beyond the bridge's own
// bounds (each of type reply, ids without surrounding spaces), then the
// bridge's bounds, whose faults keep their codes.
func (in *interactive) buttons() ([]apiButton, error) {
	action := in.Action.V
	if action == nil || len(action.Buttons) == 0 {
		return nil, missingParam(codeMissingAction, "the parameter interactive.action.buttons is required: 1 to 3 reply buttons")
	}
	out := make([]apiButton, len(action.Buttons))
	checked := make([]bridge.Button, len(action.Buttons))
	for i, b := range action.Buttons {
		at := "interactive.action.buttons[" + strconv.Itoa(i) + "]"
		switch {
		case b.Type != "reply":
			return nil, invalidValue(codeInvalidButtonType, at+`.type must be "reply"`)
		case b.Reply.ID != strings.TrimSpace(b.Reply.ID) || !withinRunes(b.Reply.ID, maxButtonIDRunes):
			return nil, invalidValue(bridge.CodeInvalidButtonID, at+".reply.id must be 1-"+strconv.Itoa(maxButtonIDRunes)+
				" characters without leading or trailing spaces")
		}
		out[i] = apiButton{ID: b.Reply.ID, Title: b.Reply.Title}
		checked[i] = bridge.Button(out[i])
	}
	if err := bridge.ValidateButtons(checked); err != nil {
		e := bridge.ErrorOf(err)
		return nil, invalidValue(e.Code, "interactive.action: "+e.Message)
	}
	return out, nil
}

// withinRunes reports valid UTF-8 of at most limit characters.
func withinRunes(s string, limit int) bool {
	return utf8.ValidString(s) && utf8.RuneCountInString(s) <= limit
}
