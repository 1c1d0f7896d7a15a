package messaging

import (
	"testing"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// The hub holds at most hubKeep events and hubKeepBytes of payloads; a
// stream behind what it holds is told to read the log itself.
func TestEventHubHoldsABoundedWindow(t *testing.T) {
	h := newEventHub(nil, logr.Discard())
	h.gen = 1
	h.publish(1, 0, nil)
	big := make([]byte, 64<<10)
	var page []webhook.Logged
	for i := int64(1); i <= 200; i++ {
		page = append(page, webhook.Logged{Seq: i, Stored: webhook.Stored{Payload: big}})
	}
	h.publish(1, 200, page)
	if h.bytes > hubKeepBytes || len(h.recent) != hubKeepBytes/len(big) || h.base != 200-int64(len(h.recent)) {
		t.Errorf("holds %d events, %d bytes, from %d", len(h.recent), h.bytes, h.base)
	}
	if _, covered, _ := h.since(h.base - 1); covered {
		t.Error("a stream behind the window is served from it")
	}
	if got, covered, _ := h.since(h.base); !covered || len(got) != len(h.recent) || got[0].Seq != h.base+1 {
		t.Errorf("a stream at the window's start: %d events from %d, covered %v", len(got), got[0].Seq, covered)
	}
}
