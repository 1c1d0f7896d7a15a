package httpapi

import (
	"net/http"
	"testing"
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
