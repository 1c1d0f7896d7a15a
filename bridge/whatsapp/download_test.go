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

	"github.com/msgbridge/msgbridge/bridge/media"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// A 20 MB video from a contact is downloaded into a sealed (encrypted)
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
	key, err := media.DeriveKey(bytesOf(7, 32))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m1")
	f, err := media.Create(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Download(ctx, in.Media.Source, f); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	back, err := media.Open(path, key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = back.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, back)
	if err != nil || n != int64(len(video)) || hex.EncodeToString(h.Sum(nil)) != in.Media.SHA256 {
		t.Fatalf("read back %d bytes (%v), sha256 %x, event says %s", n, err, h.Sum(nil), in.Media.SHA256)
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}
