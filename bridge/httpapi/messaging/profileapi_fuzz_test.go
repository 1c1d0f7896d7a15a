package messaging

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// FuzzProfileChange: PUT /api/profile's fields, from any caller with the
// API key. A change is accepted only with an about text WhatsApp takes and
// a JPEG picture within the bound; anything else is refused with its code.
func FuzzProfileChange(f *testing.F) {
	f.Add("Open 9-17", "/9j/4AAQ", true, true)
	f.Add("", "", true, true)
	f.Add("line\nbreak", "R0lGODlh", true, true)
	f.Add("\xff\xfe", "not base64!", true, false)
	f.Fuzz(func(t *testing.T, about, picture string, hasAbout, hasPicture bool) {
		c := profileChange{}
		if hasAbout {
			c.About = &about
		}
		if hasPicture {
			c.Picture = &picture
		}
		text, jpeg, err := c.validate()
		if err != nil {
			if code := bridge.ErrorOf(err).Code; code != bridge.CodeInvalidAbout && code != bridge.CodeInvalidPicture && code != bridge.CodeInvalidJSON {
				t.Fatalf("code %s", code)
			}
			return
		}
		if !hasAbout && !hasPicture {
			t.Fatal("an empty change was accepted")
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
