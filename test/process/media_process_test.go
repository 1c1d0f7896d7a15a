package process

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

var accountJID = types.NewJID(testAccount, types.DefaultUserServer)

// mediaOf is the media object of a message.upsert event.
func mediaOf(t *testing.T, e hookEvent) (id, url, sum string) {
	t.Helper()
	m, ok := e.Payload["media"].(map[string]any)
	if !ok {
		t.Fatalf("message.upsert without media: %+v", e.Payload)
	}
	id, _ = m["id"].(string)
	url, _ = m["url"].(string)
	sum, _ = m["sha256"].(string)
	if id == "" || url != "/api/media/"+id {
		t.Fatalf("media %+v", m)
	}
	return id, url, sum
}

// sendMediaAndWait has alice send a, and waits for its message.upsert.
func sendMediaAndWait(t *testing.T, sim *wasim.Simulator, hooks *hookReceiver, a wasim.Attachment) hookEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wid, err := sim.Contact(alice, "Alice").SendMedia(ctx, accountJID, a)
	if err != nil {
		t.Fatal(err)
	}
	return hooks.wait("message.upsert "+wid, func(e hookEvent) bool { return e.str("whatsapp_id") == wid })
}

// getMedia fetches a media path of the bridge with the API key and the
// headers given as "Name: value"; the exchange is checked against the API
// description.
func getMedia(t *testing.T, p *bridgeProcess, path string, headers ...string) (mediaAnswer, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+p.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", testAPIKey)
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	resp, err := apitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mediaAnswer{StatusCode: resp.StatusCode, Header: resp.Header, ContentLength: resp.ContentLength}, body
}

// mediaAnswer is what getMedia's response said, besides its body.
type mediaAnswer struct {
	StatusCode    int
	Header        http.Header
	ContentLength int64
}

func errorCodeOf(body []byte) string {
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// A 20 MB video from a contact: its message.upsert names the media, and
// GET /api/media/{id} serves it byte for byte with the event's SHA-256, a
// range of it, and refuses the file once it was tampered with (then
// downloads it again).
func TestIncomingVideoIsFetchable(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	video := make([]byte, 20<<20)
	_, _ = rand.Read(video)
	up := sendMediaAndWait(t, sim, hooks, wasim.Attachment{Kind: "video", Data: video, MimeType: "video/mp4", Caption: "the clip"})
	id, url, sum := mediaOf(t, up)
	if sum != sha256Hex(video) || up.str("type") != "video" || up.str("text") != "the clip" {
		t.Fatalf("event %+v, video's sha256 %s", up.Payload, sha256Hex(video))
	}

	resp, body := getMedia(t, p, url)
	if resp.StatusCode != http.StatusOK || sha256Hex(body) != sum || len(body) != len(video) ||
		resp.Header.Get("Content-Type") != "video/mp4" || resp.ContentLength != int64(len(video)) ||
		resp.Header.Get("Content-Disposition") != "attachment; filename="+id+".mp4" {
		t.Fatalf("GET %s: %d, %d bytes, %v", url, resp.StatusCode, len(body), resp.Header)
	}
	resp, body = getMedia(t, p, url, "Range: bytes=10000000-10000099")
	if resp.StatusCode != http.StatusPartialContent || string(body) != string(video[10000000:10000100]) {
		t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(body))
	}

	// A changed byte in the middle: the answer stops before it, short of
	// its Content-Length, so no client takes it for the file.
	file := filepath.Join(dataDir, "media", strings.TrimPrefix(id, "med_"))
	flipByte(t, file, 5<<20)
	plain, err := http.Get("http://" + p.addr + url + "?apiKey=" + testAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(plain.Body)
	_ = plain.Body.Close()
	if err == nil || len(got) >= 5<<20 || string(got) != string(video[:len(got)]) {
		t.Fatalf("a tampered file was served: %d bytes, %v", len(got), err)
	}
	// A changed last chunk is refused before any byte, and the file is
	// downloaded again.
	flipByte(t, file, -1)
	resp, body = getMedia(t, p, url)
	if resp.StatusCode != http.StatusInternalServerError || errorCodeOf(body) != "media_corrupt" {
		t.Fatalf("tampered file: %d %s", resp.StatusCode, body)
	}
	resp, body = getMedia(t, p, url)
	if resp.StatusCode != http.StatusOK || sha256Hex(body) != sum {
		t.Fatalf("after the refusal: %d, %d bytes", resp.StatusCode, len(body))
	}
}

// flipByte changes the byte at off of path (from the end when negative).
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if off < 0 {
		fi, _ := f.Stat()
		off += fi.Size()
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// kill -9 while a document downloads: after the restart its half-written
// file is gone and the document is fetchable, whole.
func TestMediaDownloadSurvivesKill9(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	sim.SetMediaRate(1 << 20) // 8 s for the document
	doc := make([]byte, 8<<20)
	_, _ = rand.Read(doc)
	up := sendMediaAndWait(t, sim, hooks, wasim.Attachment{Kind: "document", Data: doc, MimeType: "application/pdf", FileName: "report.pdf"})
	_, url, sum := mediaOf(t, up)
	mediaDir := filepath.Join(dataDir, "media")
	testutil.Eventually(t, 20*time.Second, func() bool { return len(partFiles(mediaDir)) == 1 }, "the download never began")
	time.Sleep(time.Second) // well into it
	p.kill()
	if parts := partFiles(mediaDir); len(parts) != 1 {
		t.Fatalf("no half-written file at the crash: %v", parts)
	}

	sim.SetMediaRate(0)
	p = startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), hooks.env()...))
	waitAdminState(t, p, "connected", connected)
	resp, body := getMedia(t, p, url)
	if resp.StatusCode != http.StatusOK || sha256Hex(body) != sum || len(body) != len(doc) ||
		resp.Header.Get("Content-Disposition") != "attachment; filename=report.pdf" {
		t.Fatalf("after the restart: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
	}
	if parts := partFiles(mediaDir); len(parts) != 0 {
		t.Fatalf("half-written files left: %v", parts)
	}
}

// partFiles lists the scratch files of downloads under way in dir.
func partFiles(dir string) []string {
	parts, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	return parts
}

// With a short MEDIA_RETENTION, a received image is served, then deleted
// on schedule: its file is gone and its id answers media_not_found.
func TestMediaRetention(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, append(hooks.env(), "MEDIA_RETENTION=4s")...)
	img := []byte("\x89PNG\r\n\x1a\n a small picture")
	up := sendMediaAndWait(t, sim, hooks, wasim.Attachment{Kind: "image", Data: img, MimeType: "image/png"})
	id, url, _ := mediaOf(t, up)
	resp, body := getMedia(t, p, url)
	if resp.StatusCode != http.StatusOK || string(body) != string(img) {
		t.Fatalf("GET %s: %d %q", url, resp.StatusCode, body)
	}
	file := filepath.Join(dataDir, "media", strings.TrimPrefix(id, "med_"))
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testutil.Eventually(t, 15*time.Second, func() bool {
		_, err := os.Stat(file)
		return os.IsNotExist(err)
	}, "the expired file was not deleted")
	if since := time.Since(start); since > 8*time.Second {
		t.Errorf("deleted %s after the check began", since)
	}
	// The sweep deletes the files, then their rows: in between, the id
	// answers media_expired.
	testutil.Eventually(t, 5*time.Second, func() bool {
		resp, body := getMedia(t, p, url)
		if resp.StatusCode != http.StatusNotFound || (errorCodeOf(body) != "media_expired" && errorCodeOf(body) != "media_not_found") {
			t.Fatalf("after the retention: %d %s", resp.StatusCode, body)
		}
		return errorCodeOf(body) == "media_not_found"
	}, "the expired media's id never answered media_not_found")
	resp, body = getMedia(t, p, "/api/media/med_0123456789ABCDEF0123456789abcdef")
	if resp.StatusCode != http.StatusBadRequest || errorCodeOf(body) != "invalid_media_id" {
		t.Fatalf("an id in capitals: %d %s", resp.StatusCode, body)
	}
}

// A reply to a received photo quotes it as a photo, with its caption: the
// contact's phone shows "Photo" above the reply, not a text.
func TestReplyQuotesReceivedPhoto(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	photo := []byte("\x89PNG\r\n\x1a\n a photo to answer")
	up := sendMediaAndWait(t, sim, hooks, wasim.Attachment{Kind: "image", Data: photo, MimeType: "image/png", Caption: "look"})
	code, raw := apiJSON(t, p, "POST", "/api/messages", `{"to":"`+alice+`","type":"text","text":"nice","reply_to":"`+up.str("whatsapp_id")+`"}`, nil)
	if code != http.StatusOK {
		t.Fatalf("reply: %d %s", code, raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reply, err := sim.Contact(alice, "Alice").WaitMessage(ctx, decode[sendResponse](t, raw).Messages[0].WhatsAppID)
	if err != nil {
		t.Fatal(err)
	}
	q := reply.Quoted()
	if q == nil || q.ID != up.str("whatsapp_id") || q.Message.GetImageMessage() == nil ||
		q.Message.GetImageMessage().GetCaption() != "look" || q.Message.GetImageMessage().GetMimetype() != "image/png" {
		t.Errorf("the reply quotes %+v", q)
	}
}
