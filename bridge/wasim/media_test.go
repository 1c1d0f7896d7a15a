package wasim_test

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

func TestSendImageAndDocument(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915300000001")
	erin := sim.Contact("4915300000002", "Erin")
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)

	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("pixels"), 5000)...)
	up, err := tc.Upload(ctx, png, whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tc.SendMessage(ctx, erin.JID(), &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		Caption: proto.String("a picture"), Mimetype: proto.String("image/png"),
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
	}})
	if err != nil {
		t.Fatal(err)
	}
	img := waitMessage(t, erin, resp.ID)
	sum := sha256.Sum256(png)
	if img.Media == nil || img.Media.Err != nil || img.Media.Kind != "image" || img.Media.MimeType != "image/png" ||
		img.Text() != "a picture" || !bytes.Equal(img.Media.Data, png) || !bytes.Equal(img.Media.FileSHA256, sum[:]) {
		t.Fatalf("image as received: %+v", img.Media)
	}

	pdf := []byte("%PDF-1.7\n" + string(bytes.Repeat([]byte{'x'}, 70000)))
	up, err = tc.Upload(ctx, pdf, whatsmeow.MediaDocument)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = tc.SendMessage(ctx, erin.JID(), &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
		FileName: proto.String("invoice.pdf"), Title: proto.String("invoice.pdf"), Caption: proto.String("your invoice"),
		Mimetype: proto.String("application/pdf"),
		URL:      proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
	}})
	if err != nil {
		t.Fatal(err)
	}
	doc := waitMessage(t, erin, resp.ID)
	if doc.Media == nil || doc.Media.Err != nil || doc.Media.FileName != "invoice.pdf" || doc.Media.MimeType != "application/pdf" ||
		doc.Media.FileLength != uint64(len(pdf)) || !bytes.Equal(doc.Media.Data, pdf) || doc.Text() != "your invoice" {
		t.Fatalf("document as received: %+v", doc.Media)
	}
}

func TestReceiveImageFromContact(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915300000011")
	frank := sim.Contact("4915300000012", "Frank")
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)

	data := bytes.Repeat([]byte{0xff, 0xd8, 0xff}, 3000)
	id, err := frank.SendMedia(ctx, phone.JID(), wasim.Attachment{Kind: "image", Data: data, MimeType: "image/jpeg", Caption: "look"})
	if err != nil {
		t.Fatal(err)
	}
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == id })
	img := m.Message.GetImageMessage()
	if img.GetCaption() != "look" || img.GetMimetype() != "image/jpeg" || m.Info.MediaType != "image" {
		t.Fatalf("image message %v (media type %q)", img, m.Info.MediaType)
	}
	got, err := tc.Download(ctx, img)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Download: %d bytes, %v", len(got), err)
	}
}
