package durable_test

import (
	"testing"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

func TestClaimsTakeAKeyOnce(t *testing.T) {
	var c durable.Claims[string]
	if !c.TryClaim("a") || c.TryClaim("a") {
		t.Fatal("a key is taken once until released")
	}
	if !c.Held("a") || c.Held("b") {
		t.Fatal("Held reports the taken keys only")
	}
	c.Release("a")
	if c.Held("a") || !c.TryClaim("a") {
		t.Fatal("a released key can be taken again")
	}
}

// A lane carries one row at a time: a chat's or a key's order.
func TestLanesCarryOneRowAtATime(t *testing.T) {
	var l durable.Lanes[string, int64]
	l.BeginScan()
	if !l.TryTake("chat", 1) || l.TryTake("chat", 2) {
		t.Fatal("a busy lane takes no second row")
	}
	if !l.TryTake("other", 3) {
		t.Fatal("lanes are independent")
	}
}

// The race fixed in the webhook outbox (and, by a re-read, in the media
// downloader): a scan reads its due list, a row on it is attempted and
// rescheduled, and the scan then offers it again with its stale state. A
// row ended since the scan began is not taken until the next scan.
func TestLanesRefuseARowEndedSinceTheScan(t *testing.T) {
	var l durable.Lanes[string, int64]
	l.BeginScan()
	l.TryTake("chat", 7)
	l.Done("chat", 7) // attempted and rescheduled while the scan goes on
	if l.TryTake("chat", 7) {
		t.Fatal("row 7 was taken again from a due list read before its attempt ended")
	}
	if !l.TryTake("chat", 8) {
		t.Fatal("the lane is free for the other rows")
	}
	l.Done("chat", 8)
	l.BeginScan()
	if !l.TryTake("chat", 7) {
		t.Fatal("a new scan reads row 7 as it is now")
	}
}
