package wasim_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// failingBuffer is the client's decrypted-event buffer on a disk that is
// full for the next fails writes: whatsmeow stores the plaintext in the
// transaction that stores the Signal session, so the whole decrypt fails
// and is rolled back.
type failingBuffer struct {
	store.EventBuffer
	fails atomic.Int32
}

func (b *failingBuffer) PutBufferedEvent(ctx context.Context, hash [32]byte, plaintext []byte, at time.Time) error {
	if b.fails.Add(-1) >= 0 {
		return errors.New("database or disk is full")
	}
	return b.EventBuffer.PutBufferedEvent(ctx, hash, plaintext, at)
}

// failNextDecrypt makes the client's next decrypt fail on a store error.
// The buffer is swapped while the client is offline: whatsmeow reads its
// settings from its own goroutines.
func failNextDecrypt(t *testing.T, sim *wasim.Simulator, tc *wasimtest.Client) {
	t.Helper()
	wasimtest.Settle(t, sim)
	tc.Disconnect()
	buf := &failingBuffer{EventBuffer: tc.Store.EventBuffer}
	buf.fails.Store(1)
	tc.Store.EventBuffer = buf
	tc.EnableDecryptedEventBuffer = true
	if err := tc.Connect(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
}

// A decrypt that fails on a store error makes whatsmeow send a retry
// receipt (and ack the message all the same); the contact's phone answers
// it as a phone does, encrypting the message again for that device, so the
// message is not lost.
func TestRetryReceiptIsAnsweredByTheContact(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915200000041")
	erin := sim.Contact("4915200000042", "Erin")
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)
	first, err := erin.SendText(ctx, phone.JID(), "first")
	if err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == first })

	failNextDecrypt(t, sim, tc)
	second, err := erin.SendText(ctx, phone.JID(), "second")
	if err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent(t, tc, func(m *events.UndecryptableMessage) bool { return m.Info.ID == second })
	got := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == second })
	if got.Message.GetConversation() != "second" {
		t.Errorf("the message sent again reads %q", got.Message.GetConversation())
	}
}

// The same for a group message: whatsmeow's retry receipt names the group
// and the sender as its participant; the sender's phone sends the message
// again to that device alone, 1:1 encrypted with its sender key in it, as a
// phone does, and the device reads it and the sender's next group message.
func TestGroupRetryReceiptIsAnsweredByTheSender(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915200000043")
	erin := sim.Contact("4915200000044", "Erin")
	team := sim.CreateGroup("Team", erin, phone)
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)
	sendGroupText := func(text string) string {
		t.Helper()
		id, err := erin.SendText(ctx, team.JID(), text)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := sendGroupText("first")
	wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == first })

	failNextDecrypt(t, sim, tc)
	second := sendGroupText("second")
	wasimtest.WaitEvent(t, tc, func(m *events.UndecryptableMessage) bool { return m.Info.ID == second })
	got := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == second && m.Message.GetConversation() != "" })
	if got.Message.GetConversation() != "second" || got.Info.Chat != team.JID() || got.Info.Sender.ToNonAD() != erin.JID() {
		t.Errorf("the message sent again reads %q in %s from %s", got.Message.GetConversation(), got.Info.Chat, got.Info.Sender)
	}
	third := sendGroupText("third")
	wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == third && m.Message.GetConversation() == "third" })
}
