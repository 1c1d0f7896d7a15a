package httpapi

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// A file's name never makes its content pass a type check: the issue's
// fake.jpg (text named .jpg) is refused as an image exactly as the same
// bytes named .bin are.
func TestSendChecksMediaByContent(t *testing.T) {
	e := newSendEnv(t)
	const notAnImage = "not an image at all"
	for _, name := range []string{"fake.jpg", "fake.png", "fake.webp", "fake.bin"} {
		ct, body := multipartBody(field("number", "4915100000002"), field("type[]", "image"), file(name, notAnImage))
		status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
		if status != http.StatusBadRequest || errorCode(t, raw) != "invalid_image" {
			t.Errorf("%s as an image: %d %s, want 400 invalid_image", name, status, raw)
		}
	}
	if n := len(e.queue.submitted); n != 0 {
		t.Errorf("%d requests with a fake image were submitted", n)
	}
}

// Files of each kind, as their first bytes tell.
var (
	mp4Data  = append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), bytes.Repeat([]byte{7}, 40)...)
	opusData = append([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x13OpusHead"),
		bytes.Repeat([]byte{9}, 40)...)
	mp3Data = []byte("ID3\x04\x00\x00\x00\x00\x00\x00 an mp3")
)

const testVCard = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Bob Builder\r\nTEL;TYPE=CELL:+4915100000003\r\nEND:VCARD"

// Every new type and field of the form reaches the queue validated, each
// value with the item of its type.
func TestSendFormContentTypes(t *testing.T) {
	e := newSendEnv(t)
	ct, body := multipartBody(field("number", "120363025246125486@g.us"), field("reply_to", "3EB0C431D24A7A8F2B6A"),
		field("mentions[]", "+49 151 0000 0002"), field("mentions[]", "4915100000003"),
		field("type[]", "video"), field("text[]", "the clip"), file("clip.bin", string(mp4Data)),
		field("type[]", "audio"), field("text[]", ""), file("note.ogg", string(opusData)),
		field("type[]", "audio"), field("text[]", ""), file("song.mp3", string(mp3Data)), field("ptt[]", "false"), field("ptt[]", "true"),
		field("type[]", "location"), field("latitude[]", "52.516275"), field("longitude[]", "-13.377704"),
		field("name[]", "Tor"), field("address[]", "Pariser Platz"),
		field("type[]", "contact"), field("vcard[]", testVCard))
	status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
	if status != http.StatusAccepted {
		t.Fatalf("%d %s", status, raw)
	}
	req := e.queue.submitted[0]
	it := req.Items
	if len(it) != 5 || it[0].Type != bridge.TypeVideo || it[0].File.MimeType != "video/mp4" || it[0].Text != "the clip" ||
		it[1].File.MimeType != "audio/ogg; codecs=opus" || it[1].PTT || !it[2].PTT || it[2].File.MimeType != "audio/mpeg" {
		t.Fatalf("media items %+v", it)
	}
	if l := it[3].Location; l == nil || *l != (bridge.Location{Latitude: 52.516275, Longitude: -13.377704, Name: "Tor", Address: "Pariser Platz"}) {
		t.Errorf("location %+v", l)
	}
	if c := it[4].Contact; c == nil || c.DisplayName != "Bob Builder" || c.VCard != testVCard {
		t.Errorf("contact %+v", c)
	}
	for i, item := range it {
		if item.ReplyTo != "3EB0C431D24A7A8F2B6A" || len(item.Mentions) != 2 || item.Mentions[0].JID() != "4915100000002@s.whatsapp.net" {
			t.Errorf("item %d: reply %q, mentions %v", i, item.ReplyTo, item.Mentions)
		}
	}
}

// One code per fault of the new fields and types.
func TestSendFormContentValidation(t *testing.T) {
	e := newSendEnv(t)
	num, typ := field("number", "4915100000002"), func(s string) part { return field("type[]", s) }
	loc := []part{typ("location"), field("latitude[]", "52.5"), field("longitude[]", "13.4")}
	cases := []struct {
		name  string
		parts []part
		code  string
	}{
		{"text as a video", []part{typ("video"), file("a.mp4", "not a video")}, "invalid_video"},
		{"image as a video", []part{typ("video"), file("a.mp4", string(pngData))}, "invalid_video"},
		{"pdf as an audio", []part{typ("audio"), file("a.ogg", string(pdfData))}, "invalid_audio"},
		{"video as an image", []part{typ("image"), file("a.jpg", string(mp4Data))}, "invalid_image"},
		{"audio without file", []part{typ("audio")}, "missing_file"},
		{"ptt not a boolean", []part{typ("audio"), file("a.ogg", string(opusData)), field("ptt[]", "yes")}, "invalid_ptt"},
		{"ptt without audio", []part{typ("text"), field("text[]", "hi"), field("ptt[]", "true")}, "unexpected_ptt"},
		{"audio with a caption", []part{typ("audio"), field("text[]", "x"), file("a.ogg", string(opusData))}, "unexpected_text"},
		{"location without coordinates", []part{typ("location")}, "missing_location"},
		{"location without longitude", []part{typ("location"), field("latitude[]", "1")}, "invalid_location"},
		{"latitude over 90", []part{typ("location"), field("latitude[]", "90.5"), field("longitude[]", "1")}, "invalid_location"},
		{"longitude over 180", []part{typ("location"), field("latitude[]", "1"), field("longitude[]", "-181")}, "invalid_location"},
		{"latitude NaN", []part{typ("location"), field("latitude[]", "NaN"), field("longitude[]", "1")}, "invalid_location"},
		{"latitude with exponent", []part{typ("location"), field("latitude[]", "1e1"), field("longitude[]", "1")}, "invalid_location"},
		{"name too long", append(loc, field("name[]", strings.Repeat("n", 1025))), "invalid_location"},
		{"latitude without location", []part{typ("text"), field("text[]", "hi"), field("latitude[]", "1")}, "unexpected_location"},
		{"location with a text", append(loc, field("text[]", "x")), "unexpected_text"},
		{"contact without vcard", []part{typ("contact")}, "missing_vcard"},
		{"a poll through the form", []part{typ("poll")}, "missing_poll"},
		{"buttons through the form", []part{typ("buttons"), field("text[]", "Go?")}, "missing_buttons"},
		{"vcard without FN", []part{typ("contact"), field("vcard[]", "BEGIN:VCARD\nVERSION:3.0\nEND:VCARD")}, "invalid_vcard"},
		{"vcard not a vcard", []part{typ("contact"), field("vcard[]", "hello")}, "invalid_vcard"},
		{"two cards in one", []part{typ("contact"), field("vcard[]", testVCard+"\n"+testVCard)}, "invalid_vcard"},
		{"vcard without contact", []part{typ("text"), field("text[]", "hi"), field("vcard[]", testVCard)}, "unexpected_vcard"},
		{"reply_to not an id", []part{typ("text"), field("text[]", "hi"), field("reply_to", "../x")}, "invalid_reply_to"},
		{"reply_to twice", []part{typ("text"), field("text[]", "hi"), field("reply_to", "A1"), field("reply_to", "A2")}, "invalid_reply_to"},
		{"mention of a group", []part{typ("text"), field("text[]", "hi"), field("mentions[]", "123@g.us")}, "invalid_mention"},
		{"mention not a number", []part{typ("text"), field("text[]", "hi"), field("mentions[]", "bob")}, "invalid_mention"},
		{"mention twice", []part{typ("text"), field("text[]", "hi"), field("mentions[]", "4915100000003"),
			field("mentions[]", "+49 15100000003")}, "invalid_mention"},
		{"mixed mentions forms", []part{typ("text"), field("text[]", "hi"), field("mentions", "4915100000003"),
			field("mentions[]", "4915100000004")}, "mixed_field_forms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct, body := multipartBody(append([]part{num}, c.parts...)...)
			status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
			if status != http.StatusBadRequest || errorCode(t, raw) != c.code {
				t.Errorf("%d %s, want 400 %s", status, raw, c.code)
			}
		})
	}
	if n := len(e.queue.submitted); n != 0 {
		t.Errorf("%d invalid requests were submitted", n)
	}
	if n := e.spooled(t); n != 0 {
		t.Errorf("%d spooled files left behind", n)
	}
}
