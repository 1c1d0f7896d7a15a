package bridge_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// Each fault of a status post has its own code; a valid one is normalised.
func TestValidateStatus(t *testing.T) {
	many := make([]string, bridge.MaxStatusRecipients+1)
	for i := range many {
		many[i] = fmt.Sprintf("49151%08d", i)
	}
	cases := []struct {
		name string
		typ  bridge.MessageType
		d    bridge.StatusDraft
		code string
	}{
		{"no recipients", bridge.TypeText, bridge.StatusDraft{}, "missing_status_recipients"},
		{"too many", bridge.TypeText, bridge.StatusDraft{Recipients: many}, "too_many_status_recipients"},
		{"a group", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"120363025246125486@g.us"}}, "invalid_status_recipient"},
		{"not a number", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"4915112345678", "abc"}}, "invalid_status_recipient"},
		{"twice", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"4915112345678", "+49 151 1234-5678"}}, "duplicate_status_recipient"},
		{"a document", bridge.TypeDocument, bridge.StatusDraft{Recipients: []string{"4915112345678"}}, "invalid_status_type"},
		{"a poll", bridge.TypePoll, bridge.StatusDraft{Recipients: []string{"4915112345678"}}, "invalid_status_type"},
		{"colour on an image", bridge.TypeImage, bridge.StatusDraft{Recipients: []string{"4915112345678"}, BackgroundColor: new("#000000")}, "unexpected_status_style"},
		{"font on a video", bridge.TypeVideo, bridge.StatusDraft{Recipients: []string{"4915112345678"}, Font: new("system")}, "unexpected_status_style"},
		{"no hash", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"4915112345678"}, BackgroundColor: new("1E88E5")}, "invalid_background_color"},
		{"short", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"4915112345678"}, BackgroundColor: new("#FFF")}, "invalid_background_color"},
		{"not hex", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"4915112345678"}, BackgroundColor: new("#GG0000")}, "invalid_background_color"},
		{"signed", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"4915112345678"}, BackgroundColor: new("#+1E88E")}, "invalid_background_color"},
		{"font", bridge.TypeText, bridge.StatusDraft{Recipients: []string{"4915112345678"}, Font: new("Comic Sans")}, "invalid_font"},
	}
	for _, c := range cases {
		_, err := bridge.ValidateStatus(c.typ, c.d)
		if got := bridge.ErrorOf(err); err == nil || got.Code != c.code || got.Kind != bridge.KindInvalid {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	p, err := bridge.ValidateStatus(bridge.TypeText, bridge.StatusDraft{Recipients: []string{"+49 151 1234-5678", "4915100000002"},
		BackgroundColor: new("#1e88e5"), Font: new("courierprime_bold")})
	if err != nil || !slices.Equal(p.Recipients, []bridge.Recipient{bridge.PhoneRecipient("4915112345678"), bridge.PhoneRecipient("4915100000002")}) ||
		p.BackgroundARGB != 0xFF1E88E5 || p.Font == nil || *p.Font != 10 {
		t.Errorf("valid post: %+v %v", p, err)
	}
	if p, err := bridge.ValidateStatus(bridge.TypeImage, bridge.StatusDraft{Recipients: many[:bridge.MaxStatusRecipients]}); err != nil ||
		len(p.Recipients) != bridge.MaxStatusRecipients || p.BackgroundARGB != 0 || p.Font != nil {
		t.Errorf("the most recipients: %v", err)
	}
}

// The status broadcast is a recipient of its own kind, read back from its
// JID as the log stores it.
func TestStatusBroadcastRecipient(t *testing.T) {
	if bridge.StatusBroadcast.JID() != "status@broadcast" || bridge.StatusBroadcast.String() != "status@broadcast" {
		t.Errorf("JID %q, String %q", bridge.StatusBroadcast.JID(), bridge.StatusBroadcast.String())
	}
	if r, err := bridge.RecipientFromJID("status@broadcast"); err != nil || r != bridge.StatusBroadcast {
		t.Errorf("from its JID: %+v %v", r, err)
	}
	if _, err := bridge.ParseRecipient("status@broadcast"); err == nil {
		t.Error("a chat's recipient may be the status broadcast")
	}
	if !(bridge.Incoming{Chat: bridge.StatusBroadcast}).IsStatus() || (bridge.Incoming{Chat: bridge.PhoneRecipient("4915112345678")}).IsStatus() {
		t.Error("IsStatus")
	}
	if bridge.FormatARGB(0xFF1E88E5) != "#FF1E88E5" || bridge.FormatARGB(0x05) != "#00000005" {
		t.Errorf("FormatARGB: %s %s", bridge.FormatARGB(0xFF1E88E5), bridge.FormatARGB(0x05))
	}
}

// FuzzValidateStatus: whatever a client sends as a status post is refused
// with a code of its own or accepted within the bounds: distinct phone
// numbers, a colour that reads back, a font WhatsApp knows.
func FuzzValidateStatus(f *testing.F) {
	f.Add("text", "4915112345678\n4915100000002", "#1E88E5", "system")
	f.Add("image", "4915112345678", "", "")
	f.Add("text", "", "#", "x")
	f.Add("video", "+49 151 2345678\n4915123456 78", "#80FFFFFF", "fb_script")
	f.Add("text", "120363025246125486@g.us", "#ffffffffff", "")
	f.Fuzz(func(t *testing.T, typ, recipients, color, font string) {
		d := bridge.StatusDraft{Recipients: strings.Split(recipients, "\n")}
		if recipients == "" {
			d.Recipients = nil
		}
		if color != "" {
			d.BackgroundColor = &color
		}
		if font != "" {
			d.Font = &font
		}
		p, err := bridge.ValidateStatus(bridge.MessageType(typ), d)
		if err != nil {
			if e := bridge.ErrorOf(err); e.Kind != bridge.KindInvalid || e.Code == "" {
				t.Fatalf("error %v", err)
			}
			return
		}
		if len(p.Recipients) == 0 || len(p.Recipients) > bridge.MaxStatusRecipients {
			t.Fatalf("accepted %d recipients", len(p.Recipients))
		}
		seen := map[bridge.Recipient]bool{}
		for _, r := range p.Recipients {
			if r.Kind != bridge.RecipientPhone || seen[r] {
				t.Fatalf("accepted recipient %+v of %q", r, recipients)
			}
			seen[r] = true
		}
		if d.BackgroundColor != nil && !strings.EqualFold(bridge.FormatARGB(p.BackgroundARGB)[len(bridge.FormatARGB(p.BackgroundARGB))-6:], color[len(color)-6:]) {
			t.Fatalf("colour %q read as %s", color, bridge.FormatARGB(p.BackgroundARGB))
		}
		if p.Font != nil && bridge.FontName(*p.Font) != font {
			t.Fatalf("font %q read as %d", font, *p.Font)
		}
	})
}
