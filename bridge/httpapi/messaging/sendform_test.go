package messaging

import (
	"bytes"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

func TestCleanFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":               "report.pdf",
		`C:\Users\x\Q3 report.pdf`: "Q3 report.pdf",
		"../../etc/passwd":         "passwd",
		"a\x00b\nc.txt":            "abc.txt",
		"/":                        "",
		strings.Repeat("é", 300):   strings.Repeat("é", 255),
	} {
		if got := cleanFileName(in); got != want {
			t.Errorf("cleanFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzReadSendForm feeds arbitrary bodies under the two accepted content
// types and others. It must never panic; a rejected form leaves no spooled
// file behind, and an accepted one respects every bound.
func FuzzReadSendForm(f *testing.F) {
	var seed bytes.Buffer
	mw := multipart.NewWriter(&seed)
	_ = mw.SetBoundary("B")
	_ = mw.WriteField("number", "4915100000002")
	_ = mw.WriteField("type[]", "image")
	fw, _ := mw.CreateFormFile("file[]", "a.png")
	_, _ = fw.Write([]byte("\x89PNG\r\n\x1a\nxxxx"))
	_ = mw.Close()
	f.Add("multipart/form-data; boundary=B", seed.Bytes())
	f.Add("application/x-www-form-urlencoded", []byte("number=4915100000002&type[]=text&text[]=hi"))
	f.Add("multipart/form-data", []byte("--"))
	f.Add("text/plain", []byte("x"))
	const maxFile = 64

	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		dir := t.TempDir()
		r := httptest.NewRequest("POST", "/send", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		form, ferr := readSendForm(r, spool.NewSpace(dir, 0), maxFile, true, func(string) error { return nil })
		left, _ := os.ReadDir(dir)
		if ferr != nil {
			if len(left) != 0 {
				t.Fatalf("rejected (%v) but left %d spooled files", ferr, len(left))
			}
			if e := bridge.ErrorOf(ferr); httpkit.StatusOf(e) < 400 || e.Code == "" {
				t.Fatalf("bad error %+v", e)
			}
			return
		}
		if len(form.files) != len(left) || len(form.lists["type"]) > MaxItems || len(form.lists["text"]) > MaxItems {
			t.Fatalf("form %+v, %d files on disk", form, len(left))
		}
		for _, sf := range form.files {
			if sf.Size > maxFile {
				t.Fatalf("spooled %d bytes over the %d limit", sf.Size, maxFile)
			}
		}
		if req, verr := form.toRequest(); verr == nil {
			for _, it := range req.Items {
				media := it.Type == bridge.TypeImage || it.Type == bridge.TypeDocument || it.Type == bridge.TypeVideo || it.Type == bridge.TypeAudio
				if (it.File != nil) != media {
					t.Fatalf("item %+v", it)
				}
			}
		}
		form.discard()
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatal("discard left files behind")
		}
	})
}
