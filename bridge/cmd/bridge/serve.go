package main

import (
	"context"
	"database/sql"
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

	key := []byte(s.EncryptionKey.Reveal()) // decoded by settings
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

	configure, err := simulatorClient(os.LookupEnv)
	if err != nil {
		return err
	}
	whatsapp.TuneKeepAlive(s.HeartbeatInterval)
	runCtx, stopParts := context.WithCancel(ctx)
	defer stopParts()

	// The queue needs the session to send and the session tells the queue
	// of receipts; metrics read both. Callbacks close those loops without
	// package cycles.
	var (
		queue *sendqueue.Queue
		sess  *whatsapp.Manager
	)
	// The outbox stores nothing when WEBHOOK_URL is empty.
	var m *metrics.Metrics
	hooks := webhook.New(webhook.Options{
		DB: db, Batcher: writer, URL: s.WebhookURL, Key: []byte(s.WebhookSecret.Reveal()),
		Log: log.WithName("webhook"), OnDelivery: func(ok bool) { m.WebhookDelivery(ok) },
	})
	m = metrics.New(metrics.Sources{
		SendQueueDepth: func() float64 {
			n, err := queue.Depth(runCtx)
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
	sess, err = whatsapp.New(runCtx, whatsapp.Options{
		CredentialsDir:    dir.CredentialsDir(),
		SpoolDir:          dir.SpoolDir(),
		MasterKey:         key,
		DB:                db,
		HeartbeatInterval: s.HeartbeatInterval,
		Log:               log.WithName("session"),
		ConfigureClient:   configure,
		OnReconnect:       m.Reconnect,
		Batcher:           writer,
		OnStateTx: func(ctx context.Context, tx *sql.Tx, st whatsapp.Status) error {
			ss := bridge.SessionStatus{State: bridge.SessionState(st.State), Reason: bridge.Reason(st.Reason)}
			return hooks.Enqueue(ctx, tx, webhook.SessionStatus(ss, time.Now()))
		},
		OnMessage: func(ctx context.Context, in bridge.Incoming) error {
			return hooks.EnqueueNow(ctx, webhook.MessageUpsert(in))
		},
		OnReceipt: func(ids []string, status string) {
			if _, err := queue.AdvanceStatus(runCtx, ids, sendqueue.Status(status)); err != nil {
				log.Error(err, "apply receipt")
			}
		},
	})
	if err != nil {
		return err
	}
	queue = sendqueue.New(sendqueue.Options{
		DB: db, Batcher: writer, Sender: sess, Schedule: s.RetrySchedule, Log: log.WithName("dispatch"),
		OnStatus: func(msg sendqueue.Message) { m.MessageStatus(string(msg.Status)) },
		OnStatusTx: func(ctx context.Context, tx *sql.Tx, msg sendqueue.Message) error {
			return hooks.Enqueue(ctx, tx, webhook.MessageStatus(msg.WhatsAppID, queuedRecipient(msg.Recipient), bridge.Status(msg.Status), msg.UpdatedAt))
		},
		OnAttempt: m.SendAttempt,
	})
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
			Version:    contract.BuildVersion(),
			Started:    time.Now(),
			Session:    sess,
			AdminToken: s.AdminToken,
			Messages:   queue,
			Send:       httpapi.SendConfig{APIKey: s.APIKey, SpoolDir: dir.SpoolDir(), MaxFileSize: s.MaxFileSize},
			DB:         db,
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
	parts map[string]func() error, dataDir string, state whatsapp.State,
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

// queuedRecipient reads the send queue's recipient JID for message.status;
// anything else is reported as it is stored.
func queuedRecipient(jid string) bridge.Recipient {
	if r, err := bridge.RecipientFromJID(jid); err == nil {
		return r
	}
	return bridge.Recipient{Kind: bridge.RecipientPhone, ID: jid}
}
