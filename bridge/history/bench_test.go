package history_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/history"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// words is the vocabulary of the benchmark's messages: a few common words
// and many rare ones, as chats have.
func words(r *rand.Rand, n int) string {
	common := []string{"hello", "thanks", "tomorrow", "invoice", "meeting", "ok", "yes", "the", "order", "call"}
	out := make([]string, n)
	for i := range out {
		if r.IntN(3) == 0 {
			out[i] = fmt.Sprintf("w%d", r.IntN(20000))
		} else {
			out[i] = common[r.IntN(len(common))]
		}
	}
	return strings.Join(out, " ")
}

// fill stores n messages, a third sent by the account, over 200 chats, in
// transactions of 1,000 as the writer groups them; it returns the time per
// message.
func fill(b *testing.B, db *sql.DB, n int) time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	for done := 0; done < n; done += 1000 {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		for i := done; i < done+1000 && i < n; i++ {
			chat := fmt.Sprintf("49151%08d", i%200)
			if i%3 == 0 {
				_, err = tx.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
					status, created_at, updated_at) VALUES (?, ?, 'req', 0, ?, 'text', ?, 'Sent', ?, ?)`,
					fmt.Sprint("m", i), fmt.Sprint("OUT", i), chat+"@s.whatsapp.net", words(r, 12), i, i)
			} else {
				_, err = tx.Exec(`INSERT INTO inbox (webhook_id, event, ordering_key, whatsapp_id, chat, sender, type,
					body, sent_at, received_at, payload) VALUES (?, 'message.upsert', 'k', ?, ?, ?, 'text', ?, ?, ?, '{}')`,
					fmt.Sprint("wh", i), fmt.Sprint("IN", i), chat, chat, words(r, 12), i, i)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

// BenchmarkSearch100k: search_messages' query over 100,000 messages both
// ways: p50 and p99 of 400 searches (a common word, a rare word, two
// words, a prefix; newest 20), everywhere and in one chat. Beside it, in
// the same run, the cost of storing a message with its search index and
// without (the triggers dropped), in transactions of 1,000.
//
//	go test -run=NONE -bench=Search100k -benchtime=1x ./bridge/history
func BenchmarkSearch100k(b *testing.B) {
	const n = 100_000
	plain := testutil.OpenBridgeDB(b)
	for _, trigger := range []string{"inbox_search_insert", "messages_search_insert"} {
		if _, err := plain.Exec(`DROP TRIGGER ` + trigger); err != nil {
			b.Fatal(err)
		}
	}
	db := testutil.OpenBridgeDB(b)
	unindexed, indexed := fill(b, plain, n), fill(b, db, n)
	s := &history.Store{DB: db}
	r := rand.New(rand.NewPCG(3, 4))
	queries := func(i int) string {
		switch i % 4 {
		case 0:
			return "invoice"
		case 1:
			return fmt.Sprintf("w%d", r.IntN(20000))
		case 2:
			return "meeting tomorrow"
		}
		return fmt.Sprintf("w%d", r.IntN(200))
	}
	for range b.N {
		for _, scope := range []struct {
			name string
			chat bridge.Recipient
		}{{"all", bridge.Recipient{}}, {"chat", bridge.PhoneRecipient("4915100000007")}} {
			ds := make([]float64, 400)
			for i := range ds {
				start := time.Now()
				if _, err := s.Search(context.Background(), queries(i), scope.chat, 20); err != nil {
					b.Fatal(err)
				}
				ds[i] = float64(time.Since(start).Microseconds()) / 1000
			}
			slices.Sort(ds)
			b.ReportMetric(ds[len(ds)/2], "ms-p50-"+scope.name)
			b.ReportMetric(ds[len(ds)*99/100], "ms-p99-"+scope.name)
		}
	}
	b.ReportMetric(float64(indexed.Nanoseconds())/1000, "µs-store-indexed")
	b.ReportMetric(float64(unindexed.Nanoseconds())/1000, "µs-store-unindexed")
	b.ReportMetric(0, "ns/op")
}
