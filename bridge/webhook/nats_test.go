package webhook

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// natsServer is a real nats-server with JetStream, in process, its store
// in a directory that outlives a restart.
type testNATS struct {
	tb   testing.TB
	opts server.Options
	srv  *server.Server
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func startNATS(tb testing.TB) *testNATS {
	tb.Helper()
	n := &testNATS{tb: tb, opts: server.Options{
		Host: "127.0.0.1", Port: freePort(tb), JetStream: true, StoreDir: tb.TempDir(), NoLog: true, NoSigs: true,
	}}
	n.start()
	tb.Cleanup(n.stop)
	return n
}

func (n *testNATS) start() {
	n.tb.Helper()
	opts := n.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		n.tb.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		n.tb.Fatal("nats-server did not start")
	}
	n.srv = srv
}

func (n *testNATS) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

func (n *testNATS) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.opts.Port) }

// stream creates the stream EVENTS over prefix.>, stored on disk.
func (n *testNATS) stream(tb testing.TB, prefix string) jetstream.Stream {
	tb.Helper()
	nc, err := nats.Connect(n.url())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "EVENTS", Subjects: []string{prefix + ".>"}, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// consume reads every message of the stream EVENTS from a new connection.
func (n *testNATS) consume(tb testing.TB, want int) []jetstream.Msg {
	tb.Helper()
	nc, err := nats.Connect(n.url())
	if err != nil {
		tb.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	c, err := js.OrderedConsumer(ctx, "EVENTS", jetstream.OrderedConsumerConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	var out []jetstream.Msg
	for len(out) < want {
		batch, err := c.Fetch(want-len(out), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			tb.Fatal(err)
		}
		got := 0
		for m := range batch.Messages() {
			out = append(out, m)
			got++
		}
		if got == 0 {
			break
		}
	}
	return out
}

// Events published to JetStream count only once the stream acknowledged
// them; stopped mid-stream and restarted, the server ends up with every
// event exactly once (the outbox retries; Nats-Msg-Id drops repeats).
func TestNATSStopMidStreamLosesAndRepeatsNothing(t *testing.T) {
	ns := startNATS(t)
	stream := ns.stream(t, "msgbridge")
	obs := &countingObserver{}
	o := startOutbox(t, "", func(opt *Options) {
		opt.Account = func() string { return "491510000000" }
		opt.Timeout = 2 * time.Second
		opt.Observer = obs
	})
	o.subscribe(t, "bus", ns.url()+"/msgbridge")
	const n = 200
	for i := range n / 2 {
		o.enqueue(t, upsert(i))
	}
	ns.stop() // mid-stream: some of the first half are delivered, the rest wait
	for i := n / 2; i < n; i++ {
		o.enqueue(t, upsert(i))
	}
	// Down until the outbox has failed a few times at least, so that the
	// restart meets retries on their back-off.
	testutil.Poll(t, 30*time.Second, func() (int64, bool) { f := obs.failed.Load(); return f, f >= 20 }, "failed publishes while down")
	if s, _ := o.Get(context.Background(), "bus"); s.Health.State != HealthFailing || s.Health.Pending == 0 {
		t.Fatalf("while down: %+v", s.Health)
	}
	ns.start()
	o.waitDrained(t, 2*time.Minute)
	info, err := stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	msgs := ns.consume(t, n)
	ids := map[string]int{}
	for _, m := range msgs {
		ids[m.Headers().Get(jetstream.MsgIDHeader)]++
		if m.Subject() != "msgbridge.491510000000.message.upsert" || m.Headers().Get("webhook-id") == "" {
			t.Fatalf("subject %s, headers %v", m.Subject(), m.Headers())
		}
	}
	if info.State.Msgs != n || len(msgs) != n || len(ids) != n {
		t.Errorf("stream holds %d messages, consumer read %d with %d distinct ids; want %d of each", info.State.Msgs, len(msgs), len(ids), n)
	}
}

// A NATS target is probed at creation: no server, or no stream for its
// subjects, is refused.
func TestNATSProbe(t *testing.T) {
	ns := startNATS(t)
	o := openOutbox(t, "", nil)
	err := o.Create(context.Background(), Subscription{ID: "bus", Target: ns.url() + "/nostream", Enabled: true})
	if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != "target_unreachable" {
		t.Errorf("no stream: %v", err)
	}
	ns.stop()
	err = o.Create(context.Background(), Subscription{ID: "bus", Target: ns.url() + "/msgbridge", Enabled: true})
	if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != "target_unreachable" {
		t.Errorf("no server: %v", err)
	}
}
