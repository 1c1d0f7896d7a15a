package whatsapp

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

// signalStore is what whatsmeow's SQL store gives a device for its Signal
// sessions and its decrypted-event buffer: the part batchedSignalStore
// stands in front of.
type signalStore interface {
	store.IdentityStore
	store.SessionStore
	store.PreKeyStore
	store.SenderKeyStore
	store.EventBuffer
}

// Flush limits: past either, a decryption's commit writes the pending ones
// out at once instead of waiting for the next sync, so memory stays bounded
// whatever the acks do (a plaintext can be 2 MiB: MaxIncomingCiphertext).
const (
	maxPendingPlaintext = 8 << 20
	maxPendingEvents    = 4096
)

// batchedSignalStore keeps the writes of whatsmeow's decryptions in memory
// until the next sync of session.db, then writes them in one transaction.
//
// whatsmeow decrypts each incoming message in a transaction of its own
// (EventBuffer.DoDecryptionTxn: the ratchet's step, the sender's identity,
// a used prekey, the plaintext kept until the message is handled). One
// SQLite transaction per message was a third of the bridge's CPU in a
// burst, on whatsmeow's serial handler loop
// (docs/design/20261128-incoming-throughput.md). Here such a transaction
// commits into memory; acks.sync writes every pending one in a single
// transaction before its fsync and before any ack, so what WhatsApp may
// forget is on disk as before. A crash loses only work that was not acked:
// WhatsApp delivers those messages again, and either the sessions on disk
// are from before them and decrypt them again, or a flush wrote their steps
// together with their plaintexts, which answer for them.
//
// Every other write (a send's ratchet step, a deleted identity, a session
// moved to a LID) first writes the pending ones, then goes straight to
// disk, so nothing written later is overwritten by an older pending value.
// Reads see pending values first: whatsmeow reads what it wrote.
//
// A flush writes a snapshot while decryptions go on into a fresh pending
// set: the handler never waits for the disk (it held the socket, and so
// the keepalive's answer, while a large batch was written).
type batchedSignalStore struct {
	inner signalStore

	// txnMu is held through a decryption's transaction and every direct
	// write: what SQLite's write lock did for the transactions.
	txnMu sync.Mutex
	// flushMu is held while the pending writes or a direct write go to
	// disk, in that order; after txnMu when both are held.
	flushMu sync.Mutex
	// mu guards pending and flushing, which reads consult, and migrated.
	mu       sync.Mutex
	pending  *signalWrites
	flushing *signalWrites // the snapshot a flush is writing, older than pending
	// migrated are the numbers whose Signal state moved to their LID.
	migrated map[string]struct{}
	// staged holds the writes of the decryption transaction running now
	// (under txnMu); reads inside it see them, other reads do not.
	staged *signalWrites
}

// inDecryption is the context key that marks a context inside a
// batchedSignalStore's DoDecryptionTxn; its value is that store.
type inDecryption struct{}

// inside reports whether ctx is inside a decryption transaction of s.
func (s *batchedSignalStore) inside(ctx context.Context) bool { return ctx.Value(inDecryption{}) == s }

func newBatchedSignalStore(inner signalStore) *batchedSignalStore {
	return &batchedSignalStore{inner: inner, pending: newSignalWrites(), migrated: map[string]struct{}{}}
}

// Flush writes the pending decryptions' changes in one transaction of
// session.db (committed without an fsync: acks.sync fsyncs after it).
func (s *batchedSignalStore) Flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	return s.flushLocked(ctx)
}

// flushLocked writes a snapshot of the pending set; flushMu is held. A
// failed write puts the snapshot back under what came since: the next sync
// tries again.
func (s *batchedSignalStore) flushLocked(ctx context.Context) error {
	s.mu.Lock()
	w := s.pending
	if w.empty() {
		s.mu.Unlock()
		return nil
	}
	s.pending, s.flushing = newSignalWrites(), w
	s.mu.Unlock()
	err := s.inner.DoDecryptionTxn(ctx, func(ctx context.Context) error { return w.writeTo(ctx, s.inner) })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushing = nil
	if err != nil {
		w.merge(s.pending)
		s.pending = w
	}
	return err
}

// discard forgets the pending writes: the device was deleted (a logout).
func (s *batchedSignalStore) discard() {
	s.txnMu.Lock()
	defer s.txnMu.Unlock()
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	s.pending = newSignalWrites()
	s.mu.Unlock()
}

// DoDecryptionTxn runs fn with its writes staged; they join the pending
// ones when fn succeeds and vanish when it fails, as a rolled-back
// transaction's would. A call inside one joins it.
func (s *batchedSignalStore) DoDecryptionTxn(ctx context.Context, fn func(context.Context) error) error {
	if s.inside(ctx) {
		return fn(ctx)
	}
	if full, err := s.decryption(ctx, fn); err != nil || !full {
		return err
	}
	return s.Flush(ctx) // past the memory bound: this decryption waits for the disk
}

// decryption runs one transaction under txnMu; full reports the pending
// set past its bound.
func (s *batchedSignalStore) decryption(ctx context.Context, fn func(context.Context) error) (full bool, err error) {
	s.txnMu.Lock()
	defer s.txnMu.Unlock()
	s.staged = newSignalWrites()
	err = fn(context.WithValue(ctx, inDecryption{}, s))
	staged := s.staged
	s.staged = nil
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending.merge(staged)
	return s.pending.plaintextBytes > maxPendingPlaintext || len(s.pending.events) > maxPendingEvents, nil
}

// write records a write: staged inside a decryption, else straight to disk
// after the pending ones.
func (s *batchedSignalStore) write(ctx context.Context, stage func(*signalWrites), direct func(context.Context) error) error {
	if s.inside(ctx) {
		stage(s.staged)
		return nil
	}
	return s.afterPending(ctx, direct)
}

// flushThen writes the pending ones, then runs op: for the writes this
// store does not keep (they touch many rows, or none it keeps).
func (s *batchedSignalStore) flushThen(ctx context.Context, op func(context.Context) error) error {
	if s.inside(ctx) {
		return errors.New("signal store: a bulk write inside a decryption transaction")
	}
	return s.afterPending(ctx, op)
}

// afterPending runs a direct write once the pending ones are on disk, with
// no decryption in between.
func (s *batchedSignalStore) afterPending(ctx context.Context, op func(context.Context) error) error {
	s.txnMu.Lock()
	defer s.txnMu.Unlock()
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	if err := s.flushLocked(ctx); err != nil {
		return err
	}
	return op(ctx)
}

// find runs look on the write sets a read consults, newest first, until it
// reports a hit: the running decryption's own (to the decryption alone),
// then the pending ones and the snapshot being flushed (under mu:
// decryptions merge into them meanwhile).
func (s *batchedSignalStore) find(ctx context.Context, look func(*signalWrites) bool) bool {
	if s.inside(ctx) && look(s.staged) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return look(s.pending) || (s.flushing != nil && look(s.flushing))
}

var _ signalStore = (*batchedSignalStore)(nil)

// Sessions.

func (s *batchedSignalStore) GetSession(ctx context.Context, address string) (session []byte, err error) {
	if s.find(ctx, func(w *signalWrites) (ok bool) { session, ok = w.sessions[address]; return }) {
		return session, nil
	}
	return s.inner.GetSession(ctx, address)
}

func (s *batchedSignalStore) HasSession(ctx context.Context, address string) (bool, error) {
	session, err := s.GetSession(ctx, address)
	return session != nil, err
}

func (s *batchedSignalStore) GetManySessions(ctx context.Context, addresses []string) (map[string][]byte, error) {
	found, err := s.inner.GetManySessions(ctx, addresses)
	if err != nil {
		return nil, err
	}
	for _, address := range addresses { // as the SQL store: nil for none
		var session []byte
		if s.find(ctx, func(w *signalWrites) (ok bool) { session, ok = w.sessions[address]; return }) {
			found[address] = session
		}
	}
	return found, nil
}

func (s *batchedSignalStore) PutSession(ctx context.Context, address string, session []byte) error {
	return s.write(ctx, func(w *signalWrites) { w.sessions[address] = session },
		func(ctx context.Context) error { return s.inner.PutSession(ctx, address, session) })
}

func (s *batchedSignalStore) DeleteSession(ctx context.Context, address string) error {
	return s.write(ctx, func(w *signalWrites) { w.sessions[address] = nil },
		func(ctx context.Context) error { return s.inner.DeleteSession(ctx, address) })
}

func (s *batchedSignalStore) PutManySessions(ctx context.Context, sessions map[string][]byte) error {
	return s.write(ctx, func(w *signalWrites) { maps.Copy(w.sessions, sessions) },
		func(ctx context.Context) error { return s.inner.PutManySessions(ctx, sessions) })
}

func (s *batchedSignalStore) DeleteAllSessions(ctx context.Context, phone string) error {
	return s.flushThen(ctx, func(ctx context.Context) error { return s.inner.DeleteAllSessions(ctx, phone) })
}

// MigratePNToLID moves a contact's Signal state from their phone number's
// addresses to their LID's. whatsmeow calls it for every message of a
// contact known by both and its SQL store moves only the first time per
// number, so only that first call writes the pending ones out first.
func (s *batchedSignalStore) MigratePNToLID(ctx context.Context, pn, lid types.JID) error {
	number := pn.SignalAddressUser()
	s.mu.Lock()
	_, done := s.migrated[number]
	s.mu.Unlock()
	if done {
		return nil
	}
	err := s.flushThen(ctx, func(ctx context.Context) error { return s.inner.MigratePNToLID(ctx, pn, lid) })
	if err == nil {
		s.mu.Lock()
		s.migrated[number] = struct{}{}
		s.mu.Unlock()
	}
	return err
}

// Identities.

func (s *batchedSignalStore) PutIdentity(ctx context.Context, address string, key [32]byte) error {
	return s.write(ctx, func(w *signalWrites) { w.identities[address] = &key },
		func(ctx context.Context) error { return s.inner.PutIdentity(ctx, address, key) })
}

func (s *batchedSignalStore) DeleteIdentity(ctx context.Context, address string) error {
	return s.write(ctx, func(w *signalWrites) { w.identities[address] = nil },
		func(ctx context.Context) error { return s.inner.DeleteIdentity(ctx, address) })
}

func (s *batchedSignalStore) DeleteAllIdentities(ctx context.Context, phone string) error {
	return s.flushThen(ctx, func(ctx context.Context) error { return s.inner.DeleteAllIdentities(ctx, phone) })
}

// IsTrustedIdentity trusts an unknown identity, as whatsmeow's SQL store
// does (it is saved right after).
func (s *batchedSignalStore) IsTrustedIdentity(ctx context.Context, address string, key [32]byte) (bool, error) {
	var known *[32]byte
	if s.find(ctx, func(w *signalWrites) (ok bool) { known, ok = w.identities[address]; return }) {
		return known == nil || *known == key, nil
	}
	return s.inner.IsTrustedIdentity(ctx, address, key)
}

// Prekeys: a decryption of a prekey message uses one up.

func (s *batchedSignalStore) GetPreKey(ctx context.Context, id uint32) (*keys.PreKey, error) {
	if s.find(ctx, func(w *signalWrites) (removed bool) { _, removed = w.removedPreKeys[id]; return }) {
		return nil, nil //nolint:nilnil // as the SQL store answers for a missing prekey
	}
	return s.inner.GetPreKey(ctx, id)
}

func (s *batchedSignalStore) RemovePreKey(ctx context.Context, id uint32) error {
	return s.write(ctx, func(w *signalWrites) { w.removedPreKeys[id] = struct{}{} },
		func(ctx context.Context) error { return s.inner.RemovePreKey(ctx, id) })
}

func (s *batchedSignalStore) GetOrGenPreKeys(ctx context.Context, count uint32) (got []*keys.PreKey, err error) {
	err = s.flushThen(ctx, func(ctx context.Context) (err error) { got, err = s.inner.GetOrGenPreKeys(ctx, count); return })
	return got, err
}

func (s *batchedSignalStore) GenOnePreKey(ctx context.Context) (got *keys.PreKey, err error) {
	err = s.flushThen(ctx, func(ctx context.Context) (err error) { got, err = s.inner.GenOnePreKey(ctx); return })
	return got, err
}

func (s *batchedSignalStore) MarkPreKeysAsUploaded(ctx context.Context, upToID uint32) error {
	return s.flushThen(ctx, func(ctx context.Context) error { return s.inner.MarkPreKeysAsUploaded(ctx, upToID) })
}

func (s *batchedSignalStore) UploadedPreKeyCount(ctx context.Context) (n int, err error) {
	err = s.flushThen(ctx, func(ctx context.Context) (err error) { n, err = s.inner.UploadedPreKeyCount(ctx); return })
	return n, err
}

// Sender keys: a group message's decryption steps its sender's chain.

func (s *batchedSignalStore) GetSenderKey(ctx context.Context, group, user string) ([]byte, error) {
	var key []byte
	if s.find(ctx, func(w *signalWrites) (ok bool) { key, ok = w.senderKeys[senderKeyID{group, user}]; return }) {
		return key, nil
	}
	return s.inner.GetSenderKey(ctx, group, user)
}

func (s *batchedSignalStore) PutSenderKey(ctx context.Context, group, user string, key []byte) error {
	return s.write(ctx, func(w *signalWrites) { w.senderKeys[senderKeyID{group, user}] = key },
		func(ctx context.Context) error { return s.inner.PutSenderKey(ctx, group, user, key) })
}

// The decrypted-event buffer.

func (s *batchedSignalStore) GetBufferedEvent(ctx context.Context, hash [32]byte) (*store.BufferedEvent, error) {
	var found store.BufferedEvent
	cleared := false // by a newer set than the row's
	put := s.find(ctx, func(w *signalWrites) bool {
		ev, ok := w.events[hash]
		if !ok {
			return false
		}
		cleared = cleared || ev.cleared
		found = ev.BufferedEvent
		return ev.put
	})
	if !put {
		ev, err := s.inner.GetBufferedEvent(ctx, hash)
		if ev == nil || err != nil {
			return ev, err
		}
		found = *ev
	}
	if cleared {
		found.Plaintext = nil
	}
	return &found, nil
}

func (s *batchedSignalStore) PutBufferedEvent(ctx context.Context, hash [32]byte, plaintext []byte, serverTime time.Time) error {
	ev := &bufferedWrite{put: true, BufferedEvent: store.BufferedEvent{Plaintext: plaintext, ServerTime: serverTime, InsertTime: time.Now()}}
	return s.write(ctx, func(w *signalWrites) { w.putEvent(hash, ev) },
		func(ctx context.Context) error { return s.inner.PutBufferedEvent(ctx, hash, plaintext, serverTime) })
}

func (s *batchedSignalStore) ClearBufferedEventPlaintext(ctx context.Context, hash [32]byte) error {
	return s.write(ctx, func(w *signalWrites) { w.clearEvent(hash) },
		func(ctx context.Context) error { return s.inner.ClearBufferedEventPlaintext(ctx, hash) })
}

func (s *batchedSignalStore) DeleteOldBufferedHashes(ctx context.Context) error {
	return s.flushThen(ctx, s.inner.DeleteOldBufferedHashes)
}

// Outgoing events (kept for retry receipts of sends) are written by sends,
// which this store does not batch.

func (s *batchedSignalStore) GetOutgoingEvent(ctx context.Context, chat, altChat types.JID, id types.MessageID) (string, []byte, error) {
	return s.inner.GetOutgoingEvent(ctx, chat, altChat, id)
}

func (s *batchedSignalStore) AddOutgoingEvent(ctx context.Context, chat types.JID, id types.MessageID, format string, plaintext []byte) error {
	return s.inner.AddOutgoingEvent(ctx, chat, id, format, plaintext)
}

func (s *batchedSignalStore) DeleteOldOutgoingEvents(ctx context.Context) error {
	return s.inner.DeleteOldOutgoingEvents(ctx)
}
