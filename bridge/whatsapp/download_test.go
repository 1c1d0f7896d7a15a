package whatsapp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/media"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// A 20 MB video from a contact is downloaded into a scratch (encrypted)
// file and reads back byte for byte, with the SHA-256 the event announced.
func TestDownloadIntoSealedFile(t *testing.T) {
	sim, r, alice := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	video := make([]byte, 20<<20)
	_, _ = rand.Read(video)
	id, err := alice.SendMedia(ctx, sim.Phone(account).JID(), wasim.Attachment{Kind: "video", Data: video, MimeType: "video/mp4"})
	if err != nil {
		t.Fatal(err)
	}
	in := waitIncoming(t, r, id)
	f, err := media.NewScratch(filepath.Join(t.TempDir(), "m1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Remove()
	if err := r.Download(ctx, in.Media.Source, f); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil || n != int64(len(video)) || hex.EncodeToString(h.Sum(nil)) != in.Media.SHA256 {
		t.Fatalf("read back %d bytes (%v), sha256 %x, event says %s", n, err, h.Sum(nil), in.Media.SHA256)
	}
}

// An attachment the media servers no longer have is a final failure
// (KindUpstream, media_download_failed), which the media downloader does
// not retry; the scratch file is left for the caller to delete.
func TestDownloadOfAGoneFileIsFinal(t *testing.T) {
	sim, r, alice := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id, err := alice.SendMedia(ctx, sim.Phone(account).JID(), wasim.Attachment{Kind: "image", Data: []byte("tiny"), MimeType: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	in := waitIncoming(t, r, id)
	var msg waE2E.Message
	if err := proto.Unmarshal(in.Media.Source, &msg); err != nil {
		t.Fatal(err)
	}
	msg.ImageMessage.URL = nil
	msg.ImageMessage.DirectPath = proto.String("/v/t62.7118-24/00000000000000000000000.enc?ccb=11-4")
	gone, _ := proto.Marshal(&msg)
	f, err := media.NewScratch(filepath.Join(t.TempDir(), "m1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Remove()
	err = r.Download(ctx, gone, f)
	if e := bridge.ErrorOf(err); e.Kind != bridge.KindUpstream || e.Code != "media_download_failed" {
		t.Fatalf("download of a gone file: %v", err)
	}
}
