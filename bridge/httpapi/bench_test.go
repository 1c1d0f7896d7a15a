package httpapi

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const (
	benchMessages = 1_000_000
	benchSpanDays = 365
	benchBatch    = 50_000
)

// BenchmarkDeliveryAnalytics: analytics latency for 90 days over 1,000,000
// logged messages, end to end through HTTP, from the delivery_daily rollup
// (the send queue's analytics behind the real router) and, as the baseline
// in the same run, from a GROUP BY over the messages table, which is what
// the rollup saves.
//
//	go test -run '^$' -bench DeliveryAnalytics -benchtime 20x ./bridge/httpapi/
func BenchmarkDeliveryAnalytics(b *testing.B) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	db := populateBridgeDB(b, now)
	serve := func(a DeliveryAnalytics) string {
		srv := httptest.NewServer(testDeps{Now: func() time.Time { return now }, AdminToken: testAdminToken, Analytics: a}.router())
		b.Cleanup(srv.Close)
		return srv.URL + "/api/admin/analytics/delivery"
	}
	rollup, naive := serve(sendqueue.Analytics{DB: db}), serve(naiveAnalytics{db})

	// Both must answer the same before their speeds mean anything.
	if r, n := fetch(b, rollup+"?days=90"), fetch(b, naive+"?days=90"); r != n {
		b.Fatalf("rollup and GROUP BY disagree:\n%s\n%s", r, n)
	}
	for _, c := range []struct{ name, url string }{
		{"rollup_delivery_daily", rollup},
		{"baseline_group_by_messages", naive},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				fetch(b, c.url+"?days=90")
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/op")
		})
	}
}

func fetch(b *testing.B, url string) string {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil) //nolint:noctx // a benchmark's own loopback server
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("X-Admin-Token", testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d %v %s", url, resp.StatusCode, err, body)
	}
	return string(body)
}

// naiveAnalytics counts the message log itself. It attributes a message
// to the day it was created, which equals the rollup here because
// populateBridgeDB sends every message on the day it was created.
type naiveAnalytics struct{ db *sql.DB }

func (n naiveAnalytics) DeliveryDays(ctx context.Context, now time.Time, days int) ([]bridge.DeliveryDay, error) {
	out := sendqueue.DeliveryDays(now, days)
	first, end := out[0].Day, out[len(out)-1].Day.AddDate(0, 0, 1)
	rows, err := n.db.QueryContext(ctx, `
		SELECT strftime('%Y-%m-%d', created_at / 1000, 'unixepoch') AS day,
		       sum(status IN ('Sent', 'Delivered', 'Read')), sum(status = 'Failed')
		FROM messages WHERE created_at >= ? AND created_at < ?
		GROUP BY day`, first.UnixMilli(), end.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var day string
		var success, failed int64
		if err := rows.Scan(&day, &success, &failed); err != nil {
			return nil, err
		}
		for i := range out {
			if out[i].Day.Format(time.DateOnly) == day {
				out[i].Success, out[i].Failed = success, failed
			}
		}
	}
	return out, rows.Err()
}

// populateBridgeDB creates bridge.db with the real schema and fills it as
// a year of traffic would: benchMessages messages spread evenly over
// benchSpanDays days up to now (1 in 20 Failed, the rest Sent, Delivered or
// Read), and delivery_daily holding what the send queue would have counted
// for them. The counts are summed here and written once per day instead of
// one upsert per message; the table ends the same.
func populateBridgeDB(b *testing.B, now time.Time) *sql.DB {
	b.Helper()
	ctx := context.Background()
	started := time.Now()
	db := testutil.OpenBridgeDB(b)

	start := now.AddDate(0, 0, -benchSpanDays)
	step := now.Sub(start) / benchMessages
	statuses := []string{"Sent", "Delivered", "Read", "Read"}
	daily := map[string]*[2]int{}
	for base := 0; base < benchMessages; base += benchBatch {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages (id, whatsapp_id, request_id, position, recipient,
			type, body, status, retry_count, attempts, created_at, updated_at) VALUES (?, ?, ?, 0, ?, 'text', ?, ?, 0, 1, ?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		for i := base; i < base+benchBatch; i++ {
			created := start.Add(time.Duration(i) * step)
			status := statuses[i%len(statuses)]
			if i%20 == 0 {
				status = "Failed"
			}
			if _, err := stmt.ExecContext(ctx, fmt.Sprintf("m%09d", i), fmt.Sprintf("3EB0%016X", i), fmt.Sprintf("r%09d", i),
				fmt.Sprintf("4917%08d", i%100_000), "Your order #12345 has shipped and arrives tomorrow.",
				status, created.UnixMilli(), created.UnixMilli()); err != nil {
				b.Fatal(err)
			}
			day := created.UTC().Format(time.DateOnly)
			if daily[day] == nil {
				daily[day] = &[2]int{}
			}
			if status == "Failed" {
				daily[day][1]++
			} else {
				daily[day][0]++
			}
		}
		_ = stmt.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	for day, c := range daily {
		if _, err := db.ExecContext(ctx, `INSERT INTO delivery_daily (day, success, failed) VALUES (?, ?, ?)`, day, c[0], c[1]); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil { // planner statistics: the baseline at its best
		b.Fatal(err)
	}
	b.Logf("populated %d messages over %d days in %s", benchMessages, len(daily), time.Since(started).Round(time.Second))
	return db
}
