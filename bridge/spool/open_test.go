package spool_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// An upload opens for reading with what Add recorded (the Cloud API door
// serves uploads as media objects); an unknown or deleted one is
// ErrUploadNotFound.
func TestUploadOpens(t *testing.T) {
	ctx := context.Background()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	dir := t.TempDir()
	ups := spool.NewUploads(spool.UploadOptions{DB: db, Batcher: writer, Dir: dir, Log: logr.Discard()})
	path := filepath.Join(dir, "in.part")
	if err := os.WriteFile(path, []byte("%PDF-1.4 x"), 0o600); err != nil {
		t.Fatal(err)
	}
	up, err := ups.Add(ctx, &spool.File{Path: path, Name: "a.pdf", MimeType: "application/pdf", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	got, content, err := ups.Open(ctx, up.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(content)
	_ = content.Close()
	if got.FileName != "a.pdf" || got.MimeType != "application/pdf" || got.Size != 10 || got.SHA256 != up.SHA256 || string(data) != "%PDF-1.4 x" {
		t.Errorf("opened %+v %q", got, data)
	}
	if err := ups.Delete(ctx, up.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{up.ID, "nope"} {
		if _, _, err := ups.Open(ctx, id); !errors.Is(err, spool.ErrUploadNotFound) {
			t.Errorf("%s: %v", id, err)
		}
	}
}
