package process

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// bearer adds the API key as an MCP client's configured header does.
type bearer struct{ key string }

func (k bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the official Go SDK's client to p's /mcp.
func mcpSession(b *testing.B, p *bridgeProcess) *sdk.ClientSession {
	b.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: "http://" + p.addr + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{testAPIKey}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(b *testing.B, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	b.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", name, err, res)
	}
	return res
}

// msQuantile is the q-quantile of ds, in milliseconds.
func msQuantile(ds []time.Duration, q float64) float64 {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d.Microseconds()) / 1000
	}
	return quantile(ms, q)
}

// timed runs op n times and returns each duration.
func timed(n int, op func(i int)) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		op(i)
		ds[i] = time.Since(start)
	}
	return ds
}

// BenchmarkMCPToolCalls: the latency of a tool call through /mcp (the
// official Go SDK's client, Streamable HTTP) beside the same operation
// through the JSON API, in the same run against a bridge linked to the
// simulator: reading one chat's page of 20 (read_messages beside GET
// /api/messages?direction=in&chat=) and queueing a text (send_message
// beside POST /api/messages). Then 1,000 send_message calls, each retried
// once with its idempotency_key: duplicates counts the messages the log
// holds beyond 1,000 (must be 0).
//
//	go test -run=NONE -bench=MCPToolCalls -benchtime=1x ./test/process
func BenchmarkMCPToolCalls(b *testing.B) {
	sim := wasim.Start(b)
	p := linkedBridge(b, sim, b.TempDir())
	contact := sim.Contact(alice, "Alice")
	for i := range 30 {
		writeTo(b, contact, fmt.Sprintf("message %d about the invoice", i))
	}
	testutil.Eventually(b, 30*time.Second, func() bool { return len(history(b, p, 50)) >= 30 }, "the history")
	cs := mcpSession(b, p)
	const n = 200
	for range b.N {
		read := timed(n, func(int) { callTool(b, cs, "read_messages", map[string]any{"chat": alice, "limit": 20}) })
		readAPI := timed(n, func(int) {
			if code, body := apiJSON(b, p, http.MethodGet, "/api/messages?direction=in&limit=20&chat="+alice, "", nil); code != http.StatusOK {
				b.Fatalf("GET /api/messages: %d %s", code, body)
			}
		})
		send := timed(n, func(i int) {
			callTool(b, cs, "send_message", map[string]any{"chat": alice, "text": fmt.Sprintf("mcp %d-%d", b.N, i)})
		})
		sendAPI := timed(n, func(i int) {
			body := fmt.Sprintf(`{"to":%q,"type":"text","text":"api %d-%d"}`, alice, b.N, i)
			if code, raw := apiJSON(b, p, http.MethodPost, "/api/messages", body, nil); code != http.StatusOK && code != http.StatusAccepted {
				b.Fatalf("POST /api/messages: %d %s", code, raw)
			}
		})
		b.ReportMetric(msQuantile(read, 0.5), "ms-p50-read_messages")
		b.ReportMetric(msQuantile(readAPI, 0.5), "ms-p50-GET-api-messages")
		b.ReportMetric(msQuantile(send, 0.5), "ms-p50-send_message")
		b.ReportMetric(msQuantile(sendAPI, 0.5), "ms-p50-POST-api-messages")
	}
	b.ReportMetric(float64(retriedSendDuplicates(b, sim, 1000)), "duplicates-of-1000-retried")
	b.ReportMetric(0, "ns/op")
}

// retriedSendDuplicates calls send_message n times on a fresh bridge, each
// call twice with the same idempotency_key, and returns how many messages
// the log holds beyond n.
func retriedSendDuplicates(b *testing.B, sim *wasim.Simulator, n int) int {
	p := linkedBridge(b, sim, b.TempDir())
	cs := mcpSession(b, p)
	for i := range n {
		args := map[string]any{"chat": alice, "text": fmt.Sprintf("retried %d", i), "idempotency_key": fmt.Sprintf("bench-%d", i)}
		first := callTool(b, cs, "send_message", args)
		again := callTool(b, cs, "send_message", args)
		if fmt.Sprint(first.StructuredContent) != fmt.Sprint(again.StructuredContent) {
			b.Fatalf("call %d answered %v, its retry %v", i, first.StructuredContent, again.StructuredContent)
		}
	}
	logged, cursor := 0, ""
	for {
		var page struct {
			Messages   []logEntry
			NextCursor string `json:"next_cursor"`
		}
		path := "/api/messages?limit=500"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		if code, raw := apiJSON(b, p, http.MethodGet, path, "", &page); code != http.StatusOK {
			b.Fatalf("GET /api/messages: %d %s", code, raw)
		}
		for _, m := range page.Messages {
			if strings.HasPrefix(m.Type, "text") {
				logged++
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			return logged - n
		}
	}
}
