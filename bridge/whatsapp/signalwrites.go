package whatsapp

import (
	"context"
	"maps"

	"go.mau.fi/whatsmeow/store"
)

// signalWrites are writes to whatsmeow's Signal store not yet on disk: one
// decryption's (staged) or those of every decryption since the last flush
// (pending). A nil session or identity is a deletion.
type signalWrites struct {
	sessions       map[string][]byte
	identities     map[string]*[32]byte
	senderKeys     map[senderKeyID][]byte
	removedPreKeys map[uint32]struct{}
	events         map[[32]byte]*bufferedWrite
	plaintextBytes int // of the events' plaintexts not cleared: the memory held
}

type senderKeyID struct{ group, user string }

// bufferedWrite is a write to the decrypted-event buffer: a new row (put),
// possibly cleared since, or the clear of a row already on disk.
type bufferedWrite struct {
	store.BufferedEvent
	put, cleared bool
}

func newSignalWrites() *signalWrites {
	return &signalWrites{
		sessions: map[string][]byte{}, identities: map[string]*[32]byte{}, senderKeys: map[senderKeyID][]byte{},
		removedPreKeys: map[uint32]struct{}{}, events: map[[32]byte]*bufferedWrite{},
	}
}

func (w *signalWrites) empty() bool {
	return len(w.sessions)+len(w.identities)+len(w.senderKeys)+len(w.removedPreKeys)+len(w.events) == 0
}

func (w *signalWrites) putEvent(hash [32]byte, ev *bufferedWrite) {
	if old, ok := w.events[hash]; ok && old.put && !old.cleared {
		w.plaintextBytes -= len(old.Plaintext)
	}
	w.events[hash] = ev
	if !ev.cleared {
		w.plaintextBytes += len(ev.Plaintext)
	}
}

func (w *signalWrites) clearEvent(hash [32]byte) {
	ev, ok := w.events[hash]
	switch {
	case !ok:
		w.events[hash] = &bufferedWrite{cleared: true}
	case !ev.cleared:
		ev.cleared = true
		w.plaintextBytes -= len(ev.Plaintext)
		ev.Plaintext = nil
	}
}

// merge applies newer's writes over w's.
func (w *signalWrites) merge(newer *signalWrites) {
	maps.Copy(w.sessions, newer.sessions)
	maps.Copy(w.identities, newer.identities)
	maps.Copy(w.senderKeys, newer.senderKeys)
	maps.Copy(w.removedPreKeys, newer.removedPreKeys)
	for hash, ev := range newer.events {
		if ev.put {
			w.putEvent(hash, ev)
		} else {
			w.clearEvent(hash)
		}
	}
}

// writeTo writes w to inner, inside the transaction ctx carries.
func (w *signalWrites) writeTo(ctx context.Context, inner signalStore) error {
	for address, session := range w.sessions {
		if err := putOrDelete(session == nil, func() error { return inner.DeleteSession(ctx, address) },
			func() error { return inner.PutSession(ctx, address, session) }); err != nil {
			return err
		}
	}
	for address, key := range w.identities {
		if err := putOrDelete(key == nil, func() error { return inner.DeleteIdentity(ctx, address) },
			func() error { return inner.PutIdentity(ctx, address, *key) }); err != nil {
			return err
		}
	}
	for id := range w.removedPreKeys {
		if err := inner.RemovePreKey(ctx, id); err != nil {
			return err
		}
	}
	for k, key := range w.senderKeys {
		if err := inner.PutSenderKey(ctx, k.group, k.user, key); err != nil {
			return err
		}
	}
	for hash, ev := range w.events {
		if err := ev.writeTo(ctx, inner, hash); err != nil {
			return err
		}
	}
	return nil
}

// writeTo writes the event's row, or its clear. A row put and cleared since
// is written and then cleared: its hash without a plaintext is the mark of
// a message handled, which a redelivery finds (the SQL driver stores an
// empty plaintext as an empty BLOB, not the NULL whatsmeow looks for).
func (ev *bufferedWrite) writeTo(ctx context.Context, inner signalStore, hash [32]byte) error {
	if ev.put {
		if err := inner.PutBufferedEvent(ctx, hash, ev.Plaintext, ev.ServerTime); err != nil {
			return err
		}
	}
	if ev.cleared {
		return inner.ClearBufferedEventPlaintext(ctx, hash)
	}
	return nil
}

func putOrDelete(deleting bool, del, put func() error) error {
	if deleting {
		return del()
	}
	return put()
}
