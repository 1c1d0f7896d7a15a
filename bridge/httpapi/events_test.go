package httpapi

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// sseEvent is one event read off the stream.
type sseEvent struct{ id, typ, data string }

// sseClient reads a stream with a plain HTTP client (a stream has no end
// for the validating client to read to).
type sseClient struct {
	resp   *http.Response
	events chan sseEvent
	lines  chan string // comments
}

func openStream(t *testing.T, url, lastID string) *sseClient {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", testAPIKey)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req) //nolint:bodyclose // closed by cut, at the test's end or when the test cuts the stream
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c := &sseClient{resp: resp, events: make(chan sseEvent, 1000), lines: make(chan string, 100)}
	t.Cleanup(c.cut)
	go c.read()
	return c
}

func (c *sseClient) read() {
	sc := bufio.NewScanner(c.resp.Body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			select {
			case c.lines <- line:
			default:
			}
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		case line == "" && ev.id != "":
			c.events <- ev
			ev = sseEvent{}
		}
	}
	close(c.events)
}

func (c *sseClient) cut() { _ = c.resp.Body.Close() }

func (c *sseClient) next(t *testing.T) sseEvent {
	t.Helper()
	return testutil.Receive(t, 10*time.Second, c.events, func(sseEvent) bool { return true }, "an event")
}

func (e *subsEnv) emit(t *testing.T, n, from int) {
	t.Helper()
	for i := range n {
		ev := webhook.SessionStatus(bridge.SessionStatus{State: contract.StateConnected}, time.Unix(int64(from+i), 0))
		if err := e.outbox.EnqueueNow(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
}

// A stream cut mid-way and resumed with Last-Event-ID misses nothing and
// repeats nothing; it starts from now without one, filters by type, and
// sends heartbeats while idle.
func TestEventStreamResumesWithoutLoss(t *testing.T) {
	e := newSubsEnv(t)
	e.emit(t, 3, 0) // before the stream: not sent
	c := openStream(t, e.srv.URL+"/api/events", "")
	const n = 50
	e.emit(t, n/2, 100)
	seen := map[string]bool{}
	last := ""
	for range n / 4 {
		ev := c.next(t)
		apitest.ValidateWebhook(t, []byte(ev.data))
		seen[ev.data], last = true, ev.id
	}
	c.cut()
	e.emit(t, n/2, 200) // while the client is away
	again := openStream(t, e.srv.URL+"/api/events", last)
	for len(seen) < n {
		ev := again.next(t)
		if seen[ev.data] {
			t.Fatalf("event %s repeated after the resume", ev.id)
		}
		seen[ev.data] = true
	}
	if id, _ := strconv.Atoi(last); id <= 3 {
		t.Errorf("the stream sent event %d, from before it started", id)
	}
	select {
	case ev := <-again.events:
		t.Errorf("one event too many: %+v", ev)
	default:
	}
}

// A Last-Event-ID whose next events were swept (older than the log's
// window), or above every id of the log (DATA_DIR restored from a backup),
// is never skipped in silence: the stream sends stream.gap first, naming
// the oldest id kept, and goes on from there, whatever ?events= filters.
func TestEventStreamTellsItsGaps(t *testing.T) {
	e := newSubsEnv(t)
	e.emit(t, 10, 0)                                                            // ids 1..10
	if _, err := e.db.Exec(`DELETE FROM event_log WHERE id <= 6`); err != nil { // as the window's sweep does
		t.Fatal(err)
	}
	for _, c := range []struct{ last, reason string }{{"2", "swept"}, {"1000", "unknown_id"}} {
		s := openStream(t, e.srv.URL+"/api/events?events=message.upsert", c.last)
		gap := s.next(t)
		want := `{"reason":"` + c.reason + `","last_event_id":` + c.last + `,"oldest_id":7,"newest_id":10}`
		if gap.typ != "stream.gap" || gap.id != "6" || gap.data != want {
			t.Errorf("Last-Event-ID %s: first event %+v, want stream.gap id 6 %s", c.last, gap, want)
		}
		s.cut()
	}
	all := openStream(t, e.srv.URL+"/api/events", "1000")
	if gap := all.next(t); gap.typ != "stream.gap" {
		t.Fatalf("first event %+v, want stream.gap", gap)
	}
	for want := 7; want <= 10; want++ {
		if ev := all.next(t); ev.id != strconv.Itoa(want) {
			t.Fatalf("after the gap: event %s, want %d", ev.id, want)
		}
	}
	e.emit(t, 1, 100)
	if ev := all.next(t); ev.id != "11" {
		t.Errorf("a new event after a restore: %+v, want id 11", ev)
	}
	exact := openStream(t, e.srv.URL+"/api/events", "6")
	if ev := exact.next(t); ev.id != "7" {
		t.Errorf("resumed within the window: %+v, want event 7 and no gap", ev)
	}
}

// ?events= keeps the types asked for; an idle stream sends heartbeats.
func TestEventStreamFilterAndHeartbeat(t *testing.T) {
	e := newSubsEnv(t)
	e.srv = newTestServer(t, testDeps{Events: e.outbox, EventsHeartbeat: 20 * time.Millisecond, Messages: &fakeMessages{}})
	c := openStream(t, e.srv.URL+"/api/events?events=message.upsert", "")
	testutil.Receive(t, 10*time.Second, c.lines, func(l string) bool { return l == ": heartbeat" }, "a heartbeat")
	e.emit(t, 2, 0)
	in := bridge.Incoming{WhatsAppID: "W9", From: knownSender, Chat: knownSender, Type: "text", Text: "hi", Timestamp: time.Now()}
	if err := e.outbox.EnqueueNow(context.Background(), webhook.MessageUpsert(in)); err != nil {
		t.Fatal(err)
	}
	if ev := c.next(t); ev.typ != webhook.TypeMessageUpsert || !strings.Contains(ev.data, `"W9"`) {
		t.Errorf("filtered stream sent %+v", ev)
	}
}

// Bad streams are refused before they start (through the validating
// client: these answers end).
func TestEventStreamRefusals(t *testing.T) {
	e := newSubsEnv(t)
	for _, c := range []struct{ query, last, code string }{
		{"?events=message.nope", "", "unknown_event_type"},
		{"?x=1", "", "invalid_query"},
		{"", "abc", "invalid_last_event_id"},
		{"", "-1", "invalid_last_event_id"},
	} {
		headers := []string{"X-Api-Key: " + testAPIKey}
		if c.last != "" {
			headers = append(headers, "Last-Event-ID: "+c.last)
		}
		status, body := call(t, "GET", e.srv.URL+"/api/events"+c.query, nil, headers...)
		if status != http.StatusBadRequest || errorCode(t, body) != c.code {
			t.Errorf("%s %s: %d %s, want %s", c.query, c.last, status, body, c.code)
		}
	}
	if status, _ := call(t, "GET", e.srv.URL+"/api/events", nil); status != http.StatusUnauthorized {
		t.Errorf("without a key: %d", status)
	}
}
