package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// fakeMedia answers Open from its files and errors by id.
type fakeMedia struct {
	files map[string]fakeFile
	errs  map[string]error
}

type fakeFile struct {
	mime, name string
	data       []byte
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

func (f fakeMedia) Open(_ context.Context, id string) (*bridge.MediaFile, error) {
	if err, ok := f.errs[id]; ok {
		return nil, err
	}
	file, ok := f.files[id]
	if !ok {
		return nil, bridge.ErrMediaNotFound
	}
	return &bridge.MediaFile{ID: id, MimeType: file.mime, FileName: file.name, SHA256: strings.Repeat("ab", 32),
		ReceivedAt: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), Content: readSeekNopCloser{bytes.NewReader(file.data)}}, nil
}

const (
	videoID = "med_0123456789abcdef0123456789abcdef"
	docID   = "med_11111111111111111111111111111111"
)

func mediaServer(t *testing.T) string {
	media := fakeMedia{
		files: map[string]fakeFile{
			videoID: {mime: "video/mp4", data: bytes.Repeat([]byte("0123456789"), 10000)},
			docID:   {mime: "text/html; charset=utf-8", name: `..\..\Grüße "final".html`, data: []byte("<script>x</script>")},
		},
		errs: map[string]error{
			"med_22222222222222222222222222222222": bridge.ErrMediaExpired,
			"med_33333333333333333333333333333333": bridge.ErrMediaDownloadFailed,
			"med_44444444444444444444444444444444": bridge.ErrNotLinked,
			"med_55555555555555555555555555555555": bridge.ErrMediaPending,
			"med_66666666666666666666666666666666": bridge.ErrMediaCorrupt,
			"bad":                                  bridge.Invalid("invalid_media_id", "not a media id"),
		},
	}
	return newTestServer(t, testDeps{Media: media}).URL
}

// The file is served with its type, a safe name, its length and hash, and
// cannot run as a page of the bridge.
func TestGetMediaServesTheFile(t *testing.T) {
	base := mediaServer(t)
	resp := do(t, http.MethodGet, base+"/api/media/"+docID, nil, "X-API-Key: "+testAPIKey)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != http.StatusOK || string(body) != "<script>x</script>" || resp.ContentLength != int64(len(body)) {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	for name, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Disposition":     `attachment; filename*=utf-8''Gr%C3%BC%C3%9Fe%20%22final%22.html`,
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "sandbox",
		"ETag":                    `"` + strings.Repeat("ab", 32) + `"`,
		"Last-Modified":           "Sat, 21 Nov 2026 10:00:00 GMT",
	} {
		if h.Get(name) != want {
			t.Errorf("%s: %q, want %q", name, h.Get(name), want)
		}
	}
}

// Range requests get 206 and the range, and an unchanged file (its ETag)
// answers If-Range.
func TestGetMediaRange(t *testing.T) {
	base := mediaServer(t)
	resp := do(t, http.MethodGet, base+"/api/media/"+videoID+"?apiKey="+testAPIKey, nil, "Range: bytes=99990-")
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != "0123456789" ||
		resp.Header.Get("Content-Range") != "bytes 99990-99999/100000" || resp.Header.Get("Content-Type") != "video/mp4" {
		t.Fatalf("%d %q %v", resp.StatusCode, body, resp.Header)
	}
	if want := "attachment; filename=" + videoID + ".mp4"; resp.Header.Get("Content-Disposition") != want {
		t.Errorf("Content-Disposition %q, want %q", resp.Header.Get("Content-Disposition"), want)
	}
}

// A range outside the file is 416 in the error shape, with the file's
// length in Content-Range, like every other error of the API.
func TestGetMediaRangeNotSatisfiable(t *testing.T) {
	base := mediaServer(t)
	resp := do(t, http.MethodGet, base+"/api/media/"+videoID, nil, "X-API-Key: "+testAPIKey, "Range: bytes=100000-")
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || errorCode(t, string(body)) != "range_not_satisfiable" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if got := resp.Header.Get("Content-Range"); got != "bytes */100000" {
		t.Errorf("Content-Range %q, want bytes */100000", got)
	}
}

// Every error has its status and code; the API key is required.
func TestGetMediaErrors(t *testing.T) {
	base := mediaServer(t)
	for _, c := range []struct {
		id     string
		status int
		code   string
	}{
		{"bad", http.StatusBadRequest, "invalid_media_id"},
		{"med_77777777777777777777777777777777", http.StatusNotFound, "media_not_found"},
		{"med_22222222222222222222222222222222", http.StatusNotFound, "media_expired"},
		{"med_33333333333333333333333333333333", http.StatusBadGateway, "media_download_failed"},
		{"med_44444444444444444444444444444444", http.StatusServiceUnavailable, "not_linked"},
		{"med_55555555555555555555555555555555", http.StatusGatewayTimeout, "media_pending"},
		{"med_66666666666666666666666666666666", http.StatusInternalServerError, "media_corrupt"},
	} {
		resp := do(t, http.MethodGet, base+"/api/media/"+c.id, nil, "X-API-Key: "+testAPIKey)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.status || errorCode(t, string(body)) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.id, resp.StatusCode, body, c.status, c.code)
		}
		if c.code == "media_pending" && resp.Header.Get("Retry-After") == "" {
			t.Error("media_pending without Retry-After")
		}
	}
	if code, body := call(t, http.MethodGet, base+"/api/media/"+videoID, nil); code != http.StatusUnauthorized {
		t.Errorf("without the key: %d %s", code, body)
	}
}
