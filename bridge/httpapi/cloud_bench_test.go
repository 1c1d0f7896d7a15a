package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/fakes"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// BenchmarkCloudSend: the latency of one text send through the Cloud
// door (POST /{version}/{phone}/messages), end to end over HTTP on the
// real queue and a fresh bridge.db, the session a recording port; "json"
// is the same send through the bridge's own JSON door in the same run.
//
//	go test -run '^$' -bench CloudSend -benchtime 2000x ./bridge/httpapi/
func BenchmarkCloudSend(b *testing.B) {
	for _, c := range []struct{ name, path, body string }{
		{"cloud", "/v21.0/" + cloudAccount + "/messages", `{"messaging_product":"whatsapp","to":"4915100000002","type":"text","text":{"body":"hello"}}`},
		{"json", "/api/messages", `{"to":"4915100000002","type":"text","text":"hello"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			base := cloudBenchServer(b) // a fresh bridge.db each: a grown one slows what runs after
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, base+c.path, strings.NewReader(c.body)) //nolint:noctx // a benchmark's own loopback server
				req.Header.Set("Authorization", "Bearer "+testAPIKey)
				req.Header.Set("X-API-Key", testAPIKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s answered %d %s", c.name, resp.StatusCode, raw)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/send")
		})
	}
}

// benchSender is the queue's Sender port for a benchmark: always ready,
// it sends nothing and names each message anew.
type benchSender struct{ ids atomic.Int64 }

func (s *benchSender) Send(context.Context, bridge.Outgoing) error { return nil }
func (s *benchSender) NewMessageID() string {
	return fmt.Sprintf("3EB0%016X", s.ids.Add(1))
}
func (s *benchSender) Ready() bool { return true }

// cloudBenchServer serves the Cloud door beside the bridge's own API over
// a real queue, upload store and bridge.db.
func cloudBenchServer(b *testing.B) string {
	db := testutil.OpenBridgeDB(b)
	writer := sqlite.NewBatcher(db)
	b.Cleanup(writer.Close)
	ids, err := cloudapi.NewUserIDs(masterKey)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	log := sendqueue.NewMessageLog(sendqueue.MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	queue := sendqueue.New(sendqueue.Options{Log: log, Sender: &benchSender{}, Schedule: []time.Duration{time.Hour}})
	uploads := spool.NewUploads(spool.UploadOptions{DB: db, Batcher: writer, Dir: dir, Log: logr.Discard()})
	space := spool.NewSpace(dir, 0)
	d := testDeps{Session: &fakes.Session{Link: bridge.SessionStatus{State: "connected"}}, Messages: queue, Targets: queue,
		Uploads: uploads, Chats: &fakeChats{}, Inbox: fakeHistory{},
		Send:          SendConfig{APIKey: testAPIKey, SpoolDir: dir, MaxFileSize: 1 << 20, Space: space},
		CloudAPIPaths: cloudapi.PathPrefix,
		CloudAPI: func(checkKey KeyCheck) http.Handler {
			return cloudapi.New(cloudapi.Config{CheckKey: checkKey, Sending: sendqueue.Sending{Queue: queue, Log: logr.Discard()},
				Targets: queue, Space: space, MaxFileSize: 1 << 20, Account: func() string { return cloudAccount },
				Uploads: uploads, History: fakeHistory{}, UserIDs: ids, Log: logr.Discard()})
		}}
	srv := httptest.NewServer(d.router())
	b.Cleanup(srv.Close)
	return srv.URL
}
