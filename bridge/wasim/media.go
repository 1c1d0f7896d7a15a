package wasim

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/cbcutil"
)

const (
	// mediaHost is announced in media_conn; the client's media HTTP client
	// dials the simulator whatever the host.
	mediaHost = "mmg.whatsapp.net"
	// mediaPathPrefix starts every direct path; direct paths must already
	// carry a query, because whatsmeow appends "&hash=…".
	mediaPathPrefix = "/v/t62.7118-24/"
	// maxUpload bounds one uploaded file.
	maxUpload = 128 << 20
	// macLength is the truncated HMAC-SHA256 appended to encrypted media.
	macLength = 10
)

// mediaStore keeps uploaded (encrypted) blobs by object id.
type mediaStore struct {
	mu    sync.Mutex
	auth  string
	blobs map[string][]byte
	// rate slows downloads to bytes per second (0: full speed); downloads
	// counts the downloads begun.
	rate      atomic.Int64
	downloads atomic.Int64
}

func newMediaStore() *mediaStore {
	return &mediaStore{auth: randomBase64(24), blobs: map[string][]byte{}}
}

func (m *mediaStore) put(blob []byte) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[id] = blob
	return id
}

// get returns a copy of a blob: readers must never change the stored one
// (cbcutil.Decrypt decrypts in place, and a group message is opened by
// every member's phone).
func (m *mediaStore) get(id string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[id]
	return bytes.Clone(b), ok
}

// byDirectPath finds a blob from a direct path or URL: a copy to change,
// or the stored blob itself to read only.
func (m *mediaStore) byDirectPath(path string, writable bool) ([]byte, bool) {
	i := strings.Index(path, mediaPathPrefix)
	if i < 0 {
		return nil, false
	}
	name := path[i+len(mediaPathPrefix):]
	if j := strings.IndexAny(name, "?&"); j >= 0 {
		name = name[:j]
	}
	id, ok := strings.CutSuffix(name, ".enc")
	if !ok {
		return nil, false
	}
	if writable {
		return m.get(id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[id]
	return b, ok
}

func directPathFor(id string) string { return mediaPathPrefix + id + ".enc?ccb=11-4" }

// answerMediaConn answers <iq xmlns="w:m" type="set"><media_conn/></iq>.
// whatsmeow requires auth, ttl, auth_ttl and max_buckets, and uploads to the
// first <host>.
func (s *Simulator) answerMediaConn() []waBinary.Node {
	return []waBinary.Node{{
		Tag:     "media_conn",
		Attrs:   waBinary.Attrs{"auth": s.media.auth, "ttl": 3600, "auth_ttl": 3600, "max_buckets": 12},
		Content: []waBinary.Node{{Tag: "host", Attrs: waBinary.Attrs{"hostname": mediaHost}}},
	}}
}

// serveMediaUpload serves POST /mms/{type}/{token}?auth&token, where token
// is the base64url SHA-256 of the body (encrypted file and MAC), and answers
// the JSON whatsmeow reads into UploadResponse.
func (s *Simulator) serveMediaUpload(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("auth") != s.media.auth {
		http.Error(w, "bad auth", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpload))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	sum := sha256.Sum256(body)
	token := r.PathValue("token")
	if token != base64.URLEncoding.EncodeToString(sum[:]) || r.URL.Query().Get("token") != token {
		http.Error(w, "token does not match the body", http.StatusBadRequest)
		return
	}
	id := s.media.put(body)
	path := directPathFor(id)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{
		"url":         "https://" + mediaHost + path + "&mms3=true",
		"direct_path": path,
		"handle":      uploadHandle(r),
		"object_id":   id,
	})
}

// serveMediaDownload serves GET /v/t62.7118-24/{id}.enc: the blob as
// uploaded, at the rate SetMediaRate set.
func (s *Simulator) serveMediaDownload(w http.ResponseWriter, r *http.Request) {
	blob, ok := s.media.byDirectPath(r.URL.Path, false)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.media.downloads.Add(1)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
	for len(blob) > 0 {
		rate := s.media.rate.Load()
		n := len(blob)
		if rate > 0 {
			n = min(n, max(int(rate/10), 1)) // a tenth of a second's worth
		}
		if _, err := w.Write(blob[:n]); err != nil {
			return
		}
		blob = blob[n:]
		if rate > 0 {
			_ = http.NewResponseController(w).Flush() // a gone client fails the next Write
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// SetMediaRate slows media downloads to bytesPerSecond (0: full speed),
// e.g. to stop a client in the middle of one.
func (s *Simulator) SetMediaRate(bytesPerSecond int) { s.media.rate.Store(int64(bytesPerSecond)) }

// MediaDownloads is how many media downloads have begun.
func (s *Simulator) MediaDownloads() int { return int(s.media.downloads.Load()) }

// Media is the attachment of a received message, decrypted by the simulator
// from the blob the client uploaded.
type Media struct {
	Kind       string // image, document, video or audio
	PTT        bool   // an audio sent as a voice note
	MimeType   string
	FileName   string // documents only
	Caption    string
	FileLength uint64 // as declared in the message
	FileSHA256 []byte // as declared in the message
	Data       []byte // the decrypted file, checked against FileSHA256 and FileLength
	Err        error  // why Data is missing
}

// downloadable is what media messages have in common.
type downloadable interface {
	GetDirectPath() string
	GetMediaKey() []byte
	GetFileEncSHA256() []byte
	GetFileSHA256() []byte
	GetFileLength() uint64
	GetMimetype() string
}

// open finds and decrypts the attachment of a message, if it has one.
func (m *mediaStore) open(msg *waE2E.Message) *Media {
	var d downloadable
	media := &Media{}
	switch {
	case msg.GetImageMessage() != nil:
		d, media.Kind, media.Caption = msg.GetImageMessage(), "image", msg.GetImageMessage().GetCaption()
	case msg.GetDocumentMessage() != nil:
		doc := msg.GetDocumentMessage()
		d, media.Kind, media.Caption, media.FileName = doc, "document", doc.GetCaption(), doc.GetFileName()
	case msg.GetVideoMessage() != nil:
		d, media.Kind, media.Caption = msg.GetVideoMessage(), "video", msg.GetVideoMessage().GetCaption()
	case msg.GetAudioMessage() != nil:
		d, media.Kind, media.PTT = msg.GetAudioMessage(), "audio", msg.GetAudioMessage().GetPTT()
	default:
		return nil
	}
	media.MimeType, media.FileLength, media.FileSHA256 = d.GetMimetype(), d.GetFileLength(), d.GetFileSHA256()
	blob, ok := m.byDirectPath(d.GetDirectPath(), true)
	if !ok {
		media.Err = fmt.Errorf("no uploaded file at %q", d.GetDirectPath())
		return media
	}
	media.Data, media.Err = decryptMedia(blob, d, appInfo(media.Kind))
	return media
}

func appInfo(kind string) whatsmeow.MediaType {
	switch kind {
	case "image":
		return whatsmeow.MediaImage
	case "video":
		return whatsmeow.MediaVideo
	case "audio":
		return whatsmeow.MediaAudio
	case "sticker":
		return whatsmeow.MediaImage // whatsmeow's type for stickers
	}
	return whatsmeow.MediaDocument
}

// mediaKeys expands a media key: iv, AES-256 key and HMAC key.
func mediaKeys(mediaKey []byte, info whatsmeow.MediaType) (iv, cipherKey, macKey []byte, err error) {
	expanded, err := hkdf.Key(sha256.New, mediaKey, nil, string(info), 112)
	if err != nil {
		return nil, nil, nil, err
	}
	return expanded[:16], expanded[16:48], expanded[48:80], nil
}

// decryptMedia checks and decrypts an uploaded blob: AES-256-CBC ciphertext
// followed by the first 10 bytes of HMAC-SHA256(iv || ciphertext).
func decryptMedia(blob []byte, d downloadable, info whatsmeow.MediaType) ([]byte, error) {
	if len(d.GetMediaKey()) != 32 {
		return nil, errors.New("media key must be 32 bytes")
	}
	if enc := sha256.Sum256(blob); !bytes.Equal(enc[:], d.GetFileEncSHA256()) {
		return nil, errors.New("fileEncSHA256 does not match the uploaded file")
	}
	if len(blob) < macLength {
		return nil, errors.New("uploaded file is too short")
	}
	iv, cipherKey, macKey, err := mediaKeys(d.GetMediaKey(), info)
	if err != nil {
		return nil, err
	}
	ciphertext, mac := blob[:len(blob)-macLength], blob[len(blob)-macLength:]
	h := hmac.New(sha256.New, macKey)
	h.Write(iv)
	h.Write(ciphertext)
	if !hmac.Equal(h.Sum(nil)[:macLength], mac) {
		return nil, errors.New("media MAC does not verify (wrong media key or type)")
	}
	plain, err := cbcutil.Decrypt(cipherKey, iv, ciphertext)
	if err != nil {
		return nil, fmt.Errorf("decrypt media: %w", err)
	}
	if sum := sha256.Sum256(plain); !bytes.Equal(sum[:], d.GetFileSHA256()) {
		return nil, errors.New("fileSHA256 does not match the decrypted file")
	}
	if uint64(len(plain)) != d.GetFileLength() {
		return nil, fmt.Errorf("file is %d bytes, message says %d", len(plain), d.GetFileLength())
	}
	return plain, nil
}

var errBadAttachment = errors.New("wasim: bad attachment")

// Attachment is a file a simulated user sends (see SendMedia).
type Attachment struct {
	Kind     string // "image", "video", "audio", "document" or "sticker"
	PTT      bool   // an audio recorded as a voice note
	Data     []byte
	MimeType string
	FileName string // documents
	Caption  string
}

// SendMedia uploads an encrypted attachment to the simulator's media store
// and sends the image or document message pointing at it (see Send). The
// client downloads it with whatsmeow's Download through its media HTTP client.
func (u *User) SendMedia(ctx context.Context, to types.JID, a Attachment) (types.MessageID, error) {
	msg, err := u.uploadAttachment(a)
	if err != nil {
		return "", err
	}
	return u.Send(ctx, to, msg)
}

// uploadAttachment encrypts a's file onto the media server and returns the
// message that points at it.
func (u *User) uploadAttachment(a Attachment) (*waE2E.Message, error) {
	if !slices.Contains([]string{"image", "video", "audio", "document", "sticker"}, a.Kind) {
		return nil, fmt.Errorf("%w: kind must be image, video, audio, document or sticker, not %q", errBadAttachment, a.Kind)
	}
	mediaKey := make([]byte, 32)
	_, _ = rand.Read(mediaKey)
	iv, cipherKey, macKey, err := mediaKeys(mediaKey, appInfo(a.Kind))
	if err != nil {
		return nil, err
	}
	ciphertext, err := cbcutil.Encrypt(cipherKey, iv, a.Data)
	if err != nil {
		return nil, err
	}
	h := hmac.New(sha256.New, macKey)
	h.Write(iv)
	h.Write(ciphertext)
	blob := slices.Concat(ciphertext, h.Sum(nil)[:macLength])
	encSum, plainSum := sha256.Sum256(blob), sha256.Sum256(a.Data)
	path := directPathFor(u.sim.media.put(blob))
	url := "https://" + mediaHost + path + "&mms3=true"
	return attachmentMessage(a, url, path, mediaKey, encSum[:], plainSum[:]), nil
}

// attachmentMessage is the message of kind a.Kind that points at an
// uploaded attachment.
func attachmentMessage(a Attachment, url, path string, mediaKey, encSum, plainSum []byte) *waE2E.Message {
	size := proto.Uint64(uint64(len(a.Data)))
	mime, caption := proto.String(a.MimeType), optionalString(a.Caption)
	switch a.Kind {
	case "image":
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{URL: proto.String(url), DirectPath: proto.String(path),
			MediaKey: mediaKey, FileEncSHA256: encSum, FileSHA256: plainSum, FileLength: size, Mimetype: mime, Caption: caption}}
	case "video":
		return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{URL: proto.String(url), DirectPath: proto.String(path),
			MediaKey: mediaKey, FileEncSHA256: encSum, FileSHA256: plainSum, FileLength: size, Mimetype: mime, Caption: caption}}
	case "audio":
		return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{URL: proto.String(url), DirectPath: proto.String(path),
			MediaKey: mediaKey, FileEncSHA256: encSum, FileSHA256: plainSum, FileLength: size, Mimetype: mime, PTT: proto.Bool(a.PTT)}}
	case "sticker":
		return &waE2E.Message{StickerMessage: &waE2E.StickerMessage{URL: proto.String(url), DirectPath: proto.String(path),
			MediaKey: mediaKey, FileEncSHA256: encSum, FileSHA256: plainSum, FileLength: size, Mimetype: mime}}
	}
	return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{URL: proto.String(url), DirectPath: proto.String(path),
		MediaKey: mediaKey, FileEncSHA256: encSum, FileSHA256: plainSum, FileLength: size, Mimetype: mime,
		FileName: optionalString(a.FileName), Title: optionalString(a.FileName), Caption: caption}}
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return proto.String(s)
}

// uploadHandle is the handle a channel's (unencrypted) upload gets, which
// the post names; other uploads get none.
func uploadHandle(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, "/newsletter/") {
		return randomBase64(12)
	}
	return ""
}
