package messaging

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// FuzzProfileChange: PUT /api/profile's fields, from any caller with the
// API key. A change is accepted only with a push name and an about text
// WhatsApp takes and a JPEG picture within the bound; anything else is
// refused with its code.
func FuzzProfileChange(f *testing.F) {
	f.Add("Acme", "Open 9-17", "/9j/4AAQ", true, true, true)
	f.Add("", "", "", false, true, true)
	f.Add(" ", "line\nbreak", "R0lGODlh", true, true, true)
	f.Add("tab\there", "\xff\xfe", "not base64!", true, true, false)
	f.Add("Ünïcödé ✓ 26 characters!!!", "", "", true, false, false)
	f.Fuzz(func(t *testing.T, pushName, about, picture string, hasPushName, hasAbout, hasPicture bool) {
		c := profileChange{}
		if hasPushName {
			c.PushName = &pushName
		}
		if hasAbout {
			c.About = &about
		}
		if hasPicture {
			c.Picture = &picture
		}
		text, jpeg, err := c.validate()
		if err != nil {
			if code := bridge.ErrorOf(err).Code; code != bridge.CodeInvalidPushName && code != bridge.CodeInvalidAbout &&
				code != bridge.CodeInvalidPicture && code != bridge.CodeInvalidJSON {
				t.Fatalf("code %s", code)
			}
			return
		}
		if !hasPushName && !hasAbout && !hasPicture {
			t.Fatal("an empty change was accepted")
		}
		if hasPushName && (!utf8.ValidString(pushName) || utf8.RuneCountInString(pushName) > bridge.MaxPushNameLength ||
			strings.TrimSpace(pushName) == "" || strings.ContainsAny(pushName, "\n\r\t\x00")) {
			t.Fatalf("push name %q accepted", pushName)
		}
		if hasAbout && (text != about || !utf8.ValidString(text) || utf8.RuneCountInString(text) > bridge.MaxAboutLength) {
			t.Fatalf("about %q accepted as %q", about, text)
		}
		if hasPicture && picture != "" && (len(jpeg) > maxPictureBytes || !bytes.HasPrefix(jpeg, []byte{0xFF, 0xD8, 0xFF})) {
			t.Fatalf("picture %q accepted", picture)
		}
		if len(c.changed()) == 0 {
			t.Fatal("an accepted change names nothing")
		}
	})
}
