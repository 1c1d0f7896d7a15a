package apitest_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/internal/apitest"
)

// TestCoverageAcrossProcesses records hits into a directory as a test
// process would, and reads them back as the final coverage test does.
func TestCoverageAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(apitest.CoverageDirEnv, dir)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"connected":true}`))
	}))
	defer srv.Close()
	client := &http.Client{Transport: apitest.Transport(t, nil)}
	for range 2 { // the repeat is not written twice
		resp, err := client.Get(srv.URL + "/session/status")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	apitest.ValidateWebhook(t, []byte(`{"event":"session.status","state":"connected","reason":"","timestamp":"2026-11-21T10:00:00.000Z"}`))

	hits, err := apitest.ReadCoverage(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []apitest.Hit{
		{Operation: "getSessionStatus", Status: 200, Test: t.Name()},
		{Operation: "webhookSessionStatus", Status: 0, Test: t.Name()},
	}
	if !slices.Equal(hits, want) {
		t.Errorf("hits %v, want %v", hits, want)
	}
	for _, h := range want {
		if !slices.Contains(apitest.Exercised(), h) {
			t.Errorf("this process did not record %v", h)
		}
	}
	uncovered, err := apitest.Uncovered(hits)
	if err != nil {
		t.Fatal(err)
	}
	ops, _ := apitest.Operations()
	if len(uncovered) != len(ops)-2 {
		t.Errorf("%d of %d operations uncovered, want all but 2", len(uncovered), len(ops))
	}
	for _, op := range uncovered {
		if op.ID == "getSessionStatus" || op.ID == "webhookSessionStatus" {
			t.Errorf("%s listed as uncovered", op)
		}
	}
	report, err := apitest.Report(hits)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report, "| `GET /session/status` | 200 | "+t.Name()+" |") ||
		!strings.Contains(report, "| `POST webhook session.status` |  | "+t.Name()+" |") ||
		!strings.Contains(report, "| `POST /send` |  | **none** |") {
		t.Errorf("report:\n%s", report)
	}
}

// TestOperationsListsEveryEndpoint pins the operations the document
// describes, so that removing one is a visible change.
func TestOperationsListsEveryEndpoint(t *testing.T) {
	ops, err := apitest.Operations()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		got = append(got, op.Method+" "+op.Path)
	}
	want := []string{
		"GET /health", "HEAD /health", "GET /metrics", "GET /openapi.json", "GET /docs/", "POST /send",
		"GET /api/messages", "POST /api/messages", "GET /api/messages/{id}", "DELETE /api/messages/{id}",
		"PATCH /api/messages/{id}", "POST /api/messages/{id}/reaction", "POST /api/chats/{jid}/read",
		"POST /api/chats/{jid}/presence", "GET /api/contacts/{number}", "GET /api/contacts/{number}/profile",
		"POST /api/contacts/{number}/block", "DELETE /api/contacts/{number}/block", "GET /api/blocklist", "GET /api/profile", "PUT /api/profile",
		"GET /api/profile/privacy", "GET /api/events", "POST /mcp", "DELETE /mcp",
		"GET /api/media/{id}", "POST /api/uploads", "DELETE /api/uploads/{id}", "GET /session/status",
		"GET /session/qr", "POST /session/pairing-code", "GET /session/groups", "POST /session/logout",
		"GET /api/admin/state", "DELETE /api/admin/logs", "GET /api/admin/audit",
		"DELETE /api/admin/audit/{id}", "GET /api/admin/webhooks/failed",
		"POST /api/admin/webhooks/{id}/redeliver", "POST /api/admin/webhooks/replay",
		"GET /api/admin/analytics/delivery", "GET /api/admin/subscriptions",
		"POST /api/admin/subscriptions", "GET /api/admin/subscriptions/{id}",
		"PUT /api/admin/subscriptions/{id}", "DELETE /api/admin/subscriptions/{id}",
		"GET /api/admin/keys", "POST /api/admin/keys", "PUT /api/admin/keys/{name}", "DELETE /api/admin/keys/{name}",
		"GET /api/admin/approvals", "POST /api/admin/approvals/{id}/approve", "POST /api/admin/approvals/{id}/reject",
		"GET /debug/pprof/{profile}", "POST /{version}/{phone_number_id}/messages",
		"POST /{version}/{phone_number_id}/media", "GET /{version}/{object_id}",
		"DELETE /{version}/{object_id}", "GET /{version}/{object_id}/file",
		"GET /{version}/{waba_id}/phone_numbers", "GET /{version}/debug_token",
		"GET /{version}/{waba_id}/subscribed_apps", "POST /{version}/{waba_id}/subscribed_apps",
		"DELETE /{version}/{waba_id}/subscribed_apps", "GET /{version}/{waba_id}/message_templates",
		"POST /{version}/{waba_id}/message_templates", "DELETE /{version}/{waba_id}/message_templates",
		"GET /api/channels", "POST /api/channels", "DELETE /api/channels/{jid}", "GET /api/channels/{jid}/posts",
		"GET /api/labels", "POST /api/labels", "DELETE /api/labels/{id}", "PATCH /api/labels/{id}",
		"PUT /api/labels/{id}/chats/{jid}", "DELETE /api/labels/{id}/chats/{jid}",
		"PUT /api/labels/{id}/chats/{jid}/messages/{message_id}", "DELETE /api/labels/{id}/chats/{jid}/messages/{message_id}",
		"POST /api/groups", "POST /api/groups/join", "GET /api/groups/{jid}", "PATCH /api/groups/{jid}",
		"PUT /api/groups/{jid}/photo", "DELETE /api/groups/{jid}/photo",
		"POST /api/groups/{jid}/participants", "GET /api/groups/{jid}/invite-link",
		"DELETE /api/groups/{jid}/invite-link", "POST /api/groups/{jid}/leave",
		"POST webhook message.status", "POST webhook message.upsert", "POST webhook session.status",
		"POST webhook message.reaction", "POST webhook message.edit", "POST webhook message.revoke",
		"POST webhook message.poll_vote", "POST webhook status.update",
		"POST webhook group.participants", "POST webhook group.update", "POST webhook call.offer",
		"POST webhook call.ended", "POST webhook contact.identity", "POST webhook contact.blocked",
		"POST webhook channel.post", "POST webhook label.changed", "POST webhook label.chat", "POST webhook label.message",
		"POST webhook message.approval",
	}
	if !slices.Equal(got, want) {
		t.Errorf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, op := range ops {
		if op.ID == "" {
			t.Errorf("%s has no operationId", op)
		}
	}
}
