package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// labelLog is the LabelEvents port: it records each change and applies it
// to the book, as the bridge's wiring does.
type labelLog struct {
	mu      sync.Mutex
	book    *LabelBook
	db      *sql.DB
	changes []bridge.LabelChange
}

func (l *labelLog) LabelChanged(ctx context.Context, c bridge.LabelChange) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changes = append(l.changes, c)
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := l.book.Apply(ctx, tx, c); err != nil {
		return err
	}
	return tx.Commit()
}

func (l *labelLog) has(match func(bridge.LabelChange) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.changes, match)
}

// Labels both ways through app state: before the phone shared its keys a
// change is refused (labels_unavailable); then the labels the phone made
// reach the book (a full sync), the bridge creates one and labels a chat
// and a message (the phone reads each), the phone's later change arrives
// (server_sync), and a deleted label leaves the book with its chats.
func TestLabelsThroughAppState(t *testing.T) {
	sim := wasim.Start(t)
	log := &labelLog{}
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.Labels = log })
	log.db, log.book = r.db, NewLabelBook(r.Session, r.db)
	linkByQR(t, sim, r)
	ctx := wasimtest.Context(t)
	phone, ana := sim.Phone(account), sim.Contact("4915100000002", "Ana")
	book := log.book

	if _, err := book.CreateLabel(ctx, "Early", 1); !errors.Is(err, bridge.ErrLabelsUnavailable) {
		t.Fatalf("a label before the key share: %v, want labels_unavailable", err)
	}
	if err := phone.EditLabel(ctx, "1", "New customer", 2, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the phone's label", func() bool {
		return log.has(func(c bridge.LabelChange) bool { return c.Label == "1" && c.Name == "New customer" })
	})

	paid, err := book.CreateLabel(ctx, "Paid", 5)
	if err != nil || paid.ID != "2" {
		t.Fatalf("create: %+v, %v", paid, err)
	}
	chat, _ := bridge.RecipientFromJID(ana.JID().String())
	if err := book.LabelChat(ctx, "2", chat, true); err != nil {
		t.Fatal(err)
	}
	if err := book.LabelMessage(ctx, "2", chat, "3EB0AA", true); err != nil {
		t.Fatal(err)
	}
	seen, err := phone.WaitLabelChanges(ctx, 4)
	if err != nil || seen[1].Name != "Paid" || seen[2].Chat != ana.JID().String() || seen[3].Message != "3EB0AA" {
		t.Fatalf("the phone read %+v, %v", seen, err)
	}
	if err := book.LabelChat(ctx, "9", chat, true); !errors.Is(err, bridge.ErrLabelNotFound) {
		t.Errorf("an unknown label: %v", err)
	}

	if err := phone.LabelChat(ctx, "1", types.NewJID(ana.Number(), types.DefaultUserServer), true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the phone's chat label", func() bool {
		return log.has(func(c bridge.LabelChange) bool { return c.Label == "1" && c.Kind == bridge.LabelChat && c.Labeled })
	})
	labels, err := book.Labels(ctx)
	if err != nil || len(labels) != 2 || labels[0].Name != "New customer" || !slices.Equal(labels[0].Chats, []string{ana.JID().String()}) ||
		labels[1].Name != "Paid" || labels[1].Color != 5 || len(labels[1].Chats) != 1 {
		t.Fatalf("labels %+v, %v", labels, err)
	}

	if err := book.DeleteLabel(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deletion", func() bool { l, _ := book.Labels(ctx); return len(l) == 1 })
	if byChat, _ := book.ChatLabels(ctx); len(byChat[ana.JID().String()]) != 1 || byChat[ana.JID().String()][0].Name != "Paid" {
		t.Errorf("chat labels after the deletion: %+v", byChat)
	}
}
