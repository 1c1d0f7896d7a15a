package whatsapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// batchedDevice is a linked device on a real session.db whose Signal writes
// are batched; disk is its SQL store underneath, to look past the batch.
func batchedDevice(t *testing.T) (*store.Device, *batchedSignalStore, signalStore) {
	t.Helper()
	ctx := context.Background()
	device := wasimtest.NewContainer(t).NewDevice()
	var batched *batchedSignalStore
	batchSignalWrites(device, func(s *batchedSignalStore) { batched = s })
	if batched != nil {
		t.Fatal("an unlinked device was batched before its first save")
	}
	jid := types.NewADJID("491510000001", 0, 1)
	device.ID = &jid
	device.Account = &waAdv.ADVSignedDeviceIdentity{
		AccountSignature: make([]byte, 64), AccountSignatureKey: make([]byte, 32), DeviceSignature: make([]byte, 64),
	}
	if err := device.Save(ctx); err != nil {
		t.Fatal(err)
	}
	if batched == nil || device.Sessions != batched || device.EventBuffer != batched {
		t.Fatal("pairing's first save did not batch the device's Signal stores")
	}
	if err := device.Save(ctx); err != nil { // a later save keeps the batch
		t.Fatal(err)
	}
	if device.Sessions != batched {
		t.Fatal("a later save replaced the batched store")
	}
	return device, batched, batched.inner.(*sqlstore.SQLStore)
}

// decrypt runs what whatsmeow's decryption of one message writes: the
// ratchet's step, the sender's identity, a used prekey and the plaintext.
func decrypt(t *testing.T, s *batchedSignalStore, hash byte, session string, plaintext []byte) {
	t.Helper()
	err := s.DoDecryptionTxn(context.Background(), func(ctx context.Context) error {
		return errors.Join(
			s.PutSession(ctx, "contact.0:0", []byte(session)),
			s.PutIdentity(ctx, "contact.0:0", [32]byte{1}),
			s.PutSenderKey(ctx, "group", "contact.0:0", []byte("chain-"+session)),
			s.PutBufferedEvent(ctx, [32]byte{hash}, plaintext, time.Unix(1700000000, 0)),
		)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// handled clears a message's plaintext as the ack loop does once the
// message is stored.
func handled(t *testing.T, s *batchedSignalStore, hash byte) {
	t.Helper()
	err := s.DoDecryptionTxn(context.Background(), func(ctx context.Context) error {
		return s.ClearBufferedEventPlaintext(ctx, [32]byte{hash})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sessionOn(t *testing.T, s signalStore) string {
	t.Helper()
	session, err := s.GetSession(context.Background(), "contact.0:0")
	if err != nil {
		t.Fatal(err)
	}
	return string(session)
}

func TestDecryptionsWaitInMemoryForTheFlush(t *testing.T) {
	_, batched, disk := batchedDevice(t)
	ctx := context.Background()
	decrypt(t, batched, 1, "step-1", []byte("hello"))
	decrypt(t, batched, 2, "step-2", []byte("again"))

	if got := sessionOn(t, disk); got != "" {
		t.Fatalf("session.db has the session %q before the flush", got)
	}
	if got := sessionOn(t, batched); got != "step-2" {
		t.Fatalf("whatsmeow reads session %q, want its last write step-2", got)
	}
	if ev, _ := batched.GetBufferedEvent(ctx, [32]byte{1}); ev == nil || string(ev.Plaintext) != "hello" {
		t.Fatalf("buffered event before the flush = %+v", ev)
	}
	if err := batched.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sessionOn(t, disk); got != "step-2" {
		t.Fatalf("session.db has %q after the flush, want step-2", got)
	}
	for hash, want := range map[byte]string{1: "hello", 2: "again"} {
		if ev, err := disk.GetBufferedEvent(ctx, [32]byte{hash}); err != nil || ev == nil || string(ev.Plaintext) != want {
			t.Fatalf("buffered event %d on disk = %+v, %v", hash, ev, err)
		}
	}
	if key, _ := disk.GetSenderKey(ctx, "group", "contact.0:0"); string(key) != "chain-step-2" {
		t.Fatalf("sender key on disk = %q", key)
	}
	if trusted, _ := disk.IsTrustedIdentity(ctx, "contact.0:0", [32]byte{2}); trusted {
		t.Fatal("the identity was not written: another key is trusted")
	}
}

func TestAFailedDecryptionWritesNothing(t *testing.T) {
	_, batched, disk := batchedDevice(t)
	ctx := context.Background()
	refused := errors.New("bad MAC")
	err := batched.DoDecryptionTxn(ctx, func(ctx context.Context) error {
		_ = batched.PutSession(ctx, "contact.0:0", []byte("half"))
		if got := sessionOn(t, batched); got != "" {
			t.Errorf("a read outside the transaction sees its write %q", got)
		}
		if got, _ := batched.GetSession(ctx, "contact.0:0"); string(got) != "half" {
			t.Errorf("the transaction does not read its own write: %q", got)
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v", err)
	}
	if err := batched.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sessionOn(t, batched) + sessionOn(t, disk); got != "" {
		t.Fatalf("a rolled-back decryption left session %q", got)
	}
}

// A write outside a decryption (a send's ratchet step) goes to disk after
// the pending ones, so a later flush cannot put an older session back.
func TestADirectWriteFollowsThePendingOnes(t *testing.T) {
	_, batched, disk := batchedDevice(t)
	ctx := context.Background()
	decrypt(t, batched, 1, "received", []byte("hi"))
	if err := batched.PutSession(ctx, "contact.0:0", []byte("sent")); err != nil {
		t.Fatal(err)
	}
	if ev, _ := disk.GetBufferedEvent(ctx, [32]byte{1}); ev == nil {
		t.Fatal("the decryption before the send is not on disk with it")
	}
	if err := batched.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sessionOn(t, disk); got != "sent" {
		t.Fatalf("session on disk = %q, want the send's", got)
	}
}

// The ack loop clears a plaintext that may already be on disk (a flush came
// between): the clear is written by the next flush, and read at once.
func TestAClearReachesARowAlreadyOnDisk(t *testing.T) {
	_, batched, disk := batchedDevice(t)
	ctx := context.Background()
	decrypt(t, batched, 1, "s", []byte("kept until handled"))
	if err := batched.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	handled(t, batched, 1)
	if ev, _ := batched.GetBufferedEvent(ctx, [32]byte{1}); ev == nil || ev.Plaintext != nil {
		t.Fatalf("read after the clear = %+v, want the row without its plaintext", ev)
	}
	if ev, _ := disk.GetBufferedEvent(ctx, [32]byte{1}); ev == nil || ev.Plaintext == nil {
		t.Fatal("the clear reached the disk before the flush")
	}
	if err := batched.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if ev, _ := disk.GetBufferedEvent(ctx, [32]byte{1}); ev == nil || ev.Plaintext != nil {
		t.Fatalf("on disk after the flush = %+v, want the row without its plaintext", ev)
	}
}

// Plaintexts wait in memory only up to maxPendingPlaintext: a burst of large
// messages is written out before the acks come round.
func TestPendingPlaintextsAreBounded(t *testing.T) {
	_, batched, disk := batchedDevice(t)
	ctx := context.Background()
	big := bytes.Repeat([]byte("x"), 1<<20)
	for i := range maxPendingPlaintext>>20 + 1 {
		decrypt(t, batched, byte(i), "s", big)
	}
	if ev, _ := disk.GetBufferedEvent(ctx, [32]byte{0}); ev == nil {
		t.Fatalf("%d MiB of plaintexts are all still in memory", maxPendingPlaintext>>20+1)
	}
	if n := batched.pending.plaintextBytes; n > maxPendingPlaintext {
		t.Fatalf("%d bytes pending after the bound", n)
	}
}

// A logout deletes the device: what was pending belongs to no one.
func TestDeletingTheDeviceDropsThePending(t *testing.T) {
	device, batched, _ := batchedDevice(t)
	ctx := context.Background()
	decrypt(t, batched, 1, "s", []byte("hi"))
	if err := device.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if !batched.pending.empty() {
		t.Fatal("writes of a deleted device are still pending")
	}
}

// A message decrypted and handled before any flush reaches the disk as its
// hash without a plaintext: a redelivery is recognised as handled (an empty
// plaintext instead would be decrypted as an empty message).
func TestAHandledMessageIsMarkedOnDisk(t *testing.T) {
	_, batched, disk := batchedDevice(t)
	ctx := context.Background()
	decrypt(t, batched, 1, "s", []byte("hi"))
	handled(t, batched, 1)
	if err := batched.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ev, err := disk.GetBufferedEvent(ctx, [32]byte{1})
	if err != nil || ev == nil || ev.Plaintext != nil {
		t.Fatalf("on disk = %+v, %v; want the hash with a NULL plaintext", ev, err)
	}
}

// Every message WhatsApp sees acked has its decryption on disk: the ack
// loop's sync writes the pending decryptions before its fsync and acks.
func TestAckedDecryptionsAreOnDisk(t *testing.T) {
	sim, r, alice := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	batched := r.signal.Load()
	if batched == nil {
		t.Fatal("the linked session's Signal writes are not batched")
	}
	var ids []types.MessageID
	for i := range 20 {
		id, err := alice.SendText(ctx, sim.Phone(account).JID(), fmt.Sprint("text ", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if _, err := alice.WaitTick(ctx, id, ""); err != nil {
			t.Fatalf("message %s not acked: %v", id, err)
		}
	}
	batched.mu.Lock()
	defer batched.mu.Unlock()
	if !batched.pending.empty() {
		t.Fatalf("acked messages' decryptions are still in memory only: %d sessions, %d events",
			len(batched.pending.sessions), len(batched.pending.events))
	}
}

// whatsmeow asks to move a contact's Signal state to their LID on every
// message from them; only the first ask moves anything, so only it writes
// the pending decryptions out (each ask did, in a burst: one transaction
// per message again).
func TestOnlyTheFirstMigrationToALIDFlushes(t *testing.T) {
	_, batched, disk := batchedDevice(t)
	ctx := context.Background()
	pn, lid := types.NewJID("4915100000002", types.DefaultUserServer), types.NewJID("825949050390593", types.HiddenUserServer)
	decrypt(t, batched, 1, "first", []byte("hi"))
	if err := batched.MigratePNToLID(ctx, pn, lid); err != nil {
		t.Fatal(err)
	}
	if got := sessionOn(t, disk); got != "first" {
		t.Fatalf("the first migration did not write the pending session first: %q", got)
	}
	decrypt(t, batched, 2, "second", []byte("again"))
	if err := batched.MigratePNToLID(ctx, pn, lid); err != nil {
		t.Fatal(err)
	}
	if got := sessionOn(t, disk); got != "first" {
		t.Fatalf("a repeated migration wrote the pending decryptions out: %q on disk", got)
	}
}

// heldDisk is session.db whose transactions wait until released: a slow
// disk, or a large flush on a busy machine.
type heldDisk struct {
	*sqlstore.SQLStore
	entered, release chan struct{}
}

func (d heldDisk) DoDecryptionTxn(ctx context.Context, fn func(context.Context) error) error {
	d.entered <- struct{}{}
	<-d.release
	return d.SQLStore.DoDecryptionTxn(ctx, fn)
}

// Decryptions go on while a flush writes: whatsmeow's handler, which holds
// the socket (and the keepalive's answer) while it waits, never waits for
// the disk; reads meanwhile see what is being written.
func TestDecryptionsDoNotWaitForAFlush(t *testing.T) {
	_, _, disk := batchedDevice(t)
	held := heldDisk{SQLStore: disk.(*sqlstore.SQLStore), entered: make(chan struct{}), release: make(chan struct{})}
	s := newBatchedSignalStore(held)
	ctx := context.Background()
	decrypt(t, s, 1, "first", []byte("hi"))
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(ctx) }()
	<-held.entered

	if got := sessionOn(t, s); got != "first" {
		t.Fatalf("during the flush the session reads %q, want the one being written", got)
	}
	decrypted := make(chan struct{})
	go func() { decrypt(t, s, 2, "second", []byte("again")); close(decrypted) }()
	select {
	case <-decrypted:
	case <-time.After(10 * time.Second):
		t.Fatal("a decryption waited for the flush")
	}
	if got := sessionOn(t, s); got != "second" {
		t.Fatalf("session = %q, want the newest", got)
	}
	close(held.release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if got := sessionOn(t, disk); got != "first" {
		t.Fatalf("on disk after the first flush: %q", got)
	}
	go func() { <-held.entered }()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sessionOn(t, disk); got != "second" {
		t.Fatalf("on disk after the second flush: %q", got)
	}
}
