package main

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/history"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/mcp"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// mcpDoor builds the MCP door (/mcp) on the use cases: the history, the one
// send use case, the session's read receipts and the media store. It is
// guarded by the API's key check (the one that a key's scope will narrow).
func mcpDoor(a *app, spoolMax int64) func(httpapi.KeyCheck, func(http.ResponseWriter, error)) http.Handler {
	log := a.log.WithName("mcp")
	return func(checkKey httpapi.KeyCheck, writeError func(http.ResponseWriter, error)) http.Handler {
		// Built at the first request: the SDK derives the tools' schemas
		// by reflection, which start-up need not wait for.
		return httpapi.Lazy(func() http.Handler { return newMCP(a, spoolMax, log, checkKey, writeError) })
	}
}

func newMCP(a *app, spoolMax int64, log logr.Logger, checkKey httpapi.KeyCheck, writeError func(http.ResponseWriter, error)) http.Handler {
	return mcp.New(mcp.Config{
		History:    a.history(),
		Sending:    sendqueue.Sending{Queue: a.queue, Log: log},
		Own:        a.queue,
		Receipts:   a.session,
		Media:      a.downloads,
		Files:      mcpFiles{Uploads: a.uploads, space: spool.NewSpace(a.dir.SpoolDir(), spoolMax), maxFile: a.settings.MaxFileSize},
		CheckKey:   mcp.KeyCheck(checkKey),
		WriteError: writeError,
		// A resource is read whole into the answer: the attachment
		// bound of a send bounds it too.
		MaxMediaBytes: a.settings.MaxFileSize,
		Log:           log,
	})
}

// history is the assistant's view of the conversations, on bridge.db.
func (a *app) history() *history.Store {
	return &history.Store{DB: a.db, Writer: a.writer, Now: time.Now}
}

// mcpFiles are the files an assistant's send may carry: uploads, and
// received attachments copied into the spool.
type mcpFiles struct {
	*spool.Uploads
	space   *spool.Space
	maxFile int64
}

func (f mcpFiles) Spool(r io.Reader, name string) (*sendqueue.SpooledFile, error) {
	return f.space.Write(r, name, f.maxFile)
}

// readMarks sends read receipts through the session and records the read
// mark that an assistant's unread counts start from, whichever door asked.
type readMarks struct {
	messaging.Chats
	marks *history.Store
}

func (r readMarks) MarkRead(ctx context.Context, chat, sender bridge.Recipient, id string) error {
	if err := r.Chats.MarkRead(ctx, chat, sender, id); err != nil {
		return err
	}
	return r.marks.MarkRead(ctx, chat)
}
