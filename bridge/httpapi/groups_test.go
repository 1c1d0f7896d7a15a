package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/groupadmin"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// fakeGroups is the session's group administration, counting what reached
// "WhatsApp"; a group named in refuse answers not_group_admin.
type fakeGroups struct {
	GroupAdmin // the methods this test does not call
	mu         sync.Mutex
	calls      int
	refuse     string
}

func (f *fakeGroups) ChangeMembers(_ context.Context, g bridge.Recipient, _ bridge.MemberAction, ps []bridge.Recipient) ([]bridge.MemberResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if g.JID() == f.refuse {
		return nil, bridge.ErrNotGroupAdmin
	}
	out := make([]bridge.MemberResult, len(ps))
	for i, p := range ps {
		out[i] = bridge.MemberResult{Participant: p, Outcome: bridge.MemberDone, Phone: p.ID}
	}
	return out, nil
}

func (f *fakeGroups) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Paced, idempotent, never retried: a repeat of a key answers the first
// answer without asking WhatsApp, a request the pace refused (429 with
// Retry-After) frees its key, and a refusal by WhatsApp (not an admin) is
// kept as the key's answer.
func TestGroupActionsArePacedAndIdempotent(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	later := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	groups := &fakeGroups{refuse: "120363000000000002@g.us"}
	rate := bridge.SendRate{N: 1, Per: time.Hour}
	srv := newTestServer(t, testDeps{Now: clock, Groups: groups,
		GroupActions: groupadmin.New(sendqueue.NewAnswers(db, writer, clock), rate, clock, logr.Discard())})
	post := func(group, key, participants string) (int, string, string) {
		t.Helper()
		resp := do(t, "POST", srv.URL+"/api/groups/"+group+"/participants", strings.NewReader(`{"action":"add","participants":[`+participants+`]}`),
			"X-Api-Key: "+testAPIKey, "Content-Type: application/json", "Idempotency-Key: "+key)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw), resp.Header.Get("Retry-After")
	}
	mine := "120363000000000001@g.us"
	five := `"4915100000011","4915100000012","4915100000013","4915100000014","4915100000015"`
	code, first, _ := post(mine, "k1", five)
	if code != http.StatusOK || groups.count() != 1 {
		t.Fatalf("the burst: %d %s", code, first)
	}
	if code, again, _ := post(mine, "k1", five); code != http.StatusOK || again != first || groups.count() != 1 {
		t.Fatalf("repeat: %d %s, %d calls", code, again, groups.count())
	}
	code, body, retry := post(mine, "k2", `"4915100000016"`)
	if code != http.StatusTooManyRequests || errorCode(t, body) != "group_action_rate_limited" || retry != "3600" || groups.count() != 1 {
		t.Fatalf("beyond the pace: %d %s Retry-After %q", code, body, retry)
	}
	later(time.Hour)
	if code, body, _ := post(mine, "k2", `"4915100000016"`); code != http.StatusOK || groups.count() != 2 {
		t.Fatalf("the paced key after its wait: %d %s", code, body)
	}
	later(time.Hour)
	code, body, _ = post(groups.refuse, "k3", `"4915100000016"`)
	if code != http.StatusForbidden || errorCode(t, body) != "not_group_admin" || groups.count() != 3 {
		t.Fatalf("not an admin: %d %s", code, body)
	}
	later(time.Hour)
	if code, again, _ := post(groups.refuse, "k3", `"4915100000016"`); code != http.StatusForbidden || again != body || groups.count() != 3 {
		t.Fatalf("the refusal again: %d %s, %d calls", code, again, groups.count())
	}
}

// groupReader is the session's reads of groups: a group in cached is
// answered from memory, any other one counts as a query to "WhatsApp".
type groupReader struct {
	fakeGroups
	cached map[string]bool
	reads  int
}

func (g *groupReader) GroupInfo(_ context.Context, group bridge.Recipient) (bridge.GroupInfo, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads++
	return bridge.GroupInfo{ID: group.JID(), Subject: "Ops", Created: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}, nil
}

func (g *groupReader) CachedGroupInfo(group bridge.Recipient) (bridge.GroupInfo, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.cached[group.JID()] {
		return bridge.GroupInfo{}, false
	}
	return bridge.GroupInfo{ID: group.JID(), Subject: "Ops (cached)", Created: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}, true
}

func (g *groupReader) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reads
}

// GET /api/groups/{jid} spends the group actions' pace when it asks
// WhatsApp: a burst of reads over many groups gets the pace's burst, then
// 429 with Retry-After, and leaves no turn to a change either; a group
// read lately (the session's cache) is answered without asking or paying.
func TestGroupReadsArePaced(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	groups := &groupReader{cached: map[string]bool{"120363000000000099@g.us": true}}
	rate := bridge.SendRate{N: 1, Per: time.Hour}
	srv := newTestServer(t, testDeps{Now: func() time.Time { return now }, Groups: groups,
		GroupActions: groupadmin.New(nil, rate, func() time.Time { return now }, logr.Discard())})
	get := func(group string) (int, string, string) {
		t.Helper()
		resp := do(t, "GET", srv.URL+"/api/groups/"+group, nil, "X-Api-Key: "+testAPIKey)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw), resp.Header.Get("Retry-After")
	}
	for i := range bridge.GroupActionBurst {
		if code, body, _ := get(fmt.Sprintf("1203630000000001%02d@g.us", i)); code != http.StatusOK || !strings.Contains(body, `"subject":"Ops"`) {
			t.Fatalf("read %d of the burst: %d %s", i, code, body)
		}
	}
	code, body, retry := get("120363000000000150@g.us")
	if code != http.StatusTooManyRequests || errorCode(t, body) != "group_action_rate_limited" || retry != "3600" || groups.count() != bridge.GroupActionBurst {
		t.Fatalf("a read beyond the pace: %d %s Retry-After %q, %d reads reached WhatsApp", code, body, retry, groups.count())
	}
	if code, body, _ := get("120363000000000099@g.us"); code != http.StatusOK || !strings.Contains(body, "Ops (cached)") || groups.count() != bridge.GroupActionBurst {
		t.Fatalf("a cached group with the pace spent: %d %s, %d reads", code, body, groups.count())
	}
	resp := do(t, "POST", srv.URL+"/api/groups/120363000000000099@g.us/participants", strings.NewReader(`{"action":"add","participants":["4915100000011"]}`),
		"X-Api-Key: "+testAPIKey, "Content-Type: application/json")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || groups.fakeGroups.count() != 0 {
		t.Errorf("a change after the reads spent the pace: %d, %d changes reached WhatsApp", resp.StatusCode, groups.fakeGroups.count())
	}
}
