package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/datadir"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/httpapi/dashboard"
	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/metrics"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/settings"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
	"github.com/msgbridge/msgbridge/contract"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGTERM;
// Kubernetes allows 30 s before SIGKILL by default.
const shutdownGrace = 20 * time.Second

// serve locks DATA_DIR, opens its stores, wires the bridge's parts and runs
// them until ctx ends; then it drains the HTTP server and stops the rest.
func serve(ctx context.Context, s *settings.Settings, stdout io.Writer) error {
	dir, err := datadir.Open(s.DataDir)
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }()
	// The daily files only once the lock is held: a refused second process
	// must not write into the first one's files.
	log, logFiles, err := logging.New(logging.Options{Stdout: stdout, Dir: dir.LogsDir(), Level: s.LogLevel})
	if err != nil {
		return err
	}
	defer func() { _ = logFiles.Close() }()

	key, err := hex.DecodeString(s.EncryptionKey.Reveal())
	if err != nil {
		return fmt.Errorf("ENCRYPTION_KEY: %w", err) // settings validated it; kept for safety
	}
	// Every existing database must decrypt before any is created or changed.
	for _, verify := range []func() error{
		func() error { return sqlite.VerifyBridgeDB(ctx, dir.BridgeDB(), key) },
		func() error { return whatsapp.VerifyCredentials(ctx, dir.SessionDB(), key) },
		func() error { return audit.Verify(ctx, dir.AuditDir(), key) },
	} {
		if err := verify(); err != nil {
			return fmt.Errorf("ENCRYPTION_KEY: %w", err)
		}
	}
	db, err := sqlite.OpenBridgeDB(ctx, dir.BridgeDB(), key)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	writer := sqlite.NewBatcher(db)
	defer writer.Close()
	auditLog, err := audit.Open(dir.AuditDir(), key, time.Now)
	if err != nil {
		return err
	}
	defer func() { _ = auditLog.Close() }()

	server, err := simulatorServer(os.LookupEnv)
	if err != nil {
		return err
	}
	whatsapp.TuneKeepAlive(s.HeartbeatInterval)
	runCtx, stopParts := context.WithCancel(ctx)
	defer stopParts()

	// The session tells the message log of receipts and the queue sends
	// through the session: log, session, queue, in that order. Metrics read
	// the log and the session.
	var (
		msgLog *sendqueue.Log
		sess   *whatsapp.Manager
	)
	// The outbox stores nothing when WEBHOOK_URL is empty.
	var m *metrics.Metrics
	hooks := webhook.New(webhook.Options{
		DB: db, Batcher: writer, URL: s.WebhookURL, Key: []byte(s.WebhookSecret.Reveal()),
		Log: log.WithName("webhook"), OnDelivery: func(ok bool) { m.WebhookDelivery(ok) },
	})
	m = metrics.New(metrics.Sources{
		SendQueueDepth: func() float64 {
			n, err := msgLog.Depth(runCtx)
			if err != nil {
				return math.NaN()
			}
			return float64(n)
		},
		WebhookQueueDepth: func() float64 {
			n, err := hooks.Pending(runCtx)
			if err != nil {
				return math.NaN()
			}
			return float64(n)
		},
		SessionState: func() string { return string(sess.Status().State) },
		HeartbeatAge: func() float64 {
			if hb := sess.Status().LastHeartbeat; !hb.IsZero() {
				return time.Since(hb).Seconds()
			}
			return math.NaN()
		},
	})
	msgLog = sendqueue.NewLog(sendqueue.LogOptions{
		DB: db, Batcher: writer, Events: statusEvents{hooks}, Observer: m, Log: log.WithName("dispatch"),
	})
	sess, err = whatsapp.New(runCtx, whatsapp.Options{
		CredentialsDir:    dir.CredentialsDir(),
		SpoolDir:          dir.SpoolDir(),
		MasterKey:         key,
		DB:                db,
		HeartbeatInterval: s.HeartbeatInterval,
		Log:               log.WithName("session"),
		Server:            server,
		Batcher:           writer,
		Events: sessionEvents{
			reconnected: m.Reconnect,
			stateChanged: func(ctx context.Context, tx *sql.Tx, st bridge.SessionStatus) error {
				return hooks.Enqueue(ctx, tx, webhook.SessionStatus(string(st.State), string(st.Reason), time.Now()))
			},
			incoming: func(ctx context.Context, in bridge.Incoming) error {
				return hooks.EnqueueNow(ctx, webhook.MessageUpsert(webhookIncoming(in)))
			},
			receipt: func(ctx context.Context, r bridge.Receipt) error {
				_, err := msgLog.AdvanceStatus(ctx, r.WhatsAppIDs, r.Status)
				return err
			},
		},
	})
	if err != nil {
		return err
	}
	queue := sendqueue.New(sendqueue.Options{Log: msgLog, Sender: sess, Schedule: s.RetrySchedule})
	if err := queue.SweepSpool(ctx, dir.SpoolDir()); err != nil {
		return fmt.Errorf("sweep spool: %w", err)
	}

	dash := dashboard.New(dashboard.Options{
		Session: sess, AdminToken: s.AdminToken, TOTPKey: []byte(s.TOTPSecret.Reveal()),
		Audit: httpapi.AuditRecorder{Log: auditLog, Logger: log.WithName("audit")}, Log: log.WithName("dashboard"),
	})

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.ListenAddr, err)
	}
	srv := &http.Server{
		Handler: httpapi.NewRouter(httpapi.Deps{
			Started:    time.Now(),
			Session:    sess,
			AdminToken: s.AdminToken,
			Messages:   queue,
			Send:       httpapi.SendConfig{APIKey: s.APIKey, SpoolDir: dir.SpoolDir(), MaxFileSize: s.MaxFileSize},
			Analytics:  sendqueue.Analytics{DB: db},
			Audit:      httpapi.AuditRecorder{Log: auditLog, Logger: log.WithName("audit")},
			LogFiles:   logFiles,
			Metrics:    m.Handler(),
			Webhooks:   hooks,
			Dashboard:  dash,
			Log:        log.WithName("api"),
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	// Shutdown waits for handlers without cancelling them; the dashboard's
	// event streams would hold it for the whole grace period.
	srv.RegisterOnShutdown(dash.Close)
	return runParts(ctx, log, srv, ln, stopParts, map[string]func() error{
		"session":    func() error { return sess.Run(runCtx) },
		"send queue": func() error { return queue.Run(runCtx) },
		"webhooks":   func() error { return hooks.Run(runCtx) },
	}, dir.Root(), sess.Status().State)
}

// runParts serves HTTP on ln and runs the background parts until ctx ends
// or one of them fails; then it drains the server and stops the parts.
func runParts(ctx context.Context, log logr.Logger, srv *http.Server, ln net.Listener, stop context.CancelFunc,
	parts map[string]func() error, dataDir string, state bridge.SessionState,
) error {
	done := make(chan error, len(parts)+1)
	for name, run := range parts {
		go func() {
			if err := run(); err != nil {
				done <- fmt.Errorf("%s: %w", name, err)
				return
			}
			done <- nil
		}()
	}
	log.Info("bridge listening", "addr", ln.Addr().String(), "version", contract.BuildVersion(), "dataDir", dataDir, "session", state)
	go func() { done <- fmt.Errorf("http server: %w", srv.Serve(ln)) }()

	var failure error
	select {
	case failure = <-done:
	case <-ctx.Done():
		log.Info("shutting down")
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	errs := []error{failure, srv.Shutdown(shutdownCtx)}
	stop()
	// Every part and the server report once; the failure above was one.
	remaining := len(parts) + 1
	if failure != nil {
		remaining--
	}
	for range remaining {
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// statusEvents puts the send queue's status changes in the webhook outbox.
type statusEvents struct{ hooks *webhook.Outbox }

func (e statusEvents) StatusChanged(ctx context.Context, tx *sql.Tx, msg bridge.Message) error {
	return e.hooks.Enqueue(ctx, tx, webhook.MessageStatus(msg.WhatsAppID, msg.Recipient.JID(), string(msg.Status), msg.UpdatedAt))
}

// sessionEvents hands the session's events to the closures above (a
// stopgap until the wiring is rewritten).
type sessionEvents struct {
	stateChanged func(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus) error
	incoming     func(ctx context.Context, in bridge.Incoming) error
	receipt      func(ctx context.Context, r bridge.Receipt) error
	reconnected  func()
}

func (e sessionEvents) StateChanged(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus) error {
	return e.stateChanged(ctx, tx, s)
}
func (e sessionEvents) Incoming(ctx context.Context, in bridge.Incoming) error {
	return e.incoming(ctx, in)
}
func (e sessionEvents) Receipt(ctx context.Context, r bridge.Receipt) error { return e.receipt(ctx, r) }
func (e sessionEvents) Reconnected()                                        { e.reconnected() }

// webhookIncoming is in as message.upsert reports it.
func webhookIncoming(in bridge.Incoming) webhook.Incoming {
	out := webhook.Incoming{
		WhatsAppID: in.WhatsAppID, From: in.From.String(), Chat: in.Chat.String(), PushName: in.PushName,
		Type: in.Type, Text: in.Text, Timestamp: in.Timestamp,
	}
	if in.Media != nil {
		out.Media = &webhook.Media{MimeType: in.Media.MimeType, Size: in.Media.Size, FileName: in.Media.FileName}
	}
	return out
}
