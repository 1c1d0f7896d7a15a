// Command bridge links one WhatsApp account and serves the msgbridge HTTP API.
//
// Settings come from environment variables or flags (DESIGN.md section 2);
// an invalid one stops start-up with one line naming it, exit status 2.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/msgbridge/msgbridge/bridge/api"
	"github.com/msgbridge/msgbridge/bridge/bridgedb"
	"github.com/msgbridge/msgbridge/bridge/datadir"
	"github.com/msgbridge/msgbridge/bridge/dispatch"
	"github.com/msgbridge/msgbridge/bridge/session"
	"github.com/msgbridge/msgbridge/bridge/settings"
	"github.com/msgbridge/msgbridge/bridge/store"
	"github.com/msgbridge/msgbridge/bridge/version"
)

// Exit statuses: 2 for a setting or command-line problem, 1 for a failure
// while running.
const (
	exitRunFailed  = 1
	exitBadSetting = 2
)

// shutdownGrace bounds how long in-flight requests may finish after SIGTERM;
// Kubernetes allows 30 s before SIGKILL by default.
const shutdownGrace = 20 * time.Second

func main() {
	os.Exit(runUntilSignal())
}

// runUntilSignal runs the bridge until SIGINT or SIGTERM.
func runUntilSignal() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
}

// run is the whole process; main only supplies the real world to it.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	s, err := settings.Load(args, lookupEnv, stderr)
	if errors.Is(err, settings.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bridge: %v\n", err)
		return exitBadSetting
	}
	log := newLogger(stdout, s.LogLevel)
	if err := serve(ctx, s, log); err != nil {
		log.Error(err, "bridge stopped")
		// Also one plain line on stderr, where a person starting the bridge
		// (or kubectl logs --previous) looks for why it exited.
		fmt.Fprintf(stderr, "bridge: %v\n", err)
		return exitRunFailed
	}
	return 0
}

func newLogger(w io.Writer, level settings.LogLevel) logr.Logger {
	verbosity := 0
	if level == settings.LevelDebug {
		verbosity = 1
	}
	return funcr.NewJSON(func(obj string) { fmt.Fprintln(w, obj) }, funcr.Options{
		LogTimestamp:    true,
		TimestampFormat: time.RFC3339Nano,
		Verbosity:       verbosity,
	})
}

// serve opens DATA_DIR and runs the session and the HTTP API until ctx
// ends, then drains them.
func serve(ctx context.Context, s *settings.Settings, log logr.Logger) error {
	dir, err := datadir.Open(s.DataDir)
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }()

	key, err := hex.DecodeString(s.EncryptionKey.Reveal())
	if err != nil {
		return fmt.Errorf("ENCRYPTION_KEY: %w", err) // settings validated it; kept for safety
	}
	// Every existing database must decrypt before any is created or changed.
	if err := bridgedb.Verify(ctx, dir.BridgeDB(), key); err != nil {
		return fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	if err := session.VerifyCredentials(ctx, dir.SessionDB(), key); err != nil {
		return fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	db, err := bridgedb.Open(ctx, dir.BridgeDB(), key)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()

	writer := store.NewBatcher(db)
	defer writer.Close()

	configure, err := simulatorClient(os.LookupEnv)
	if err != nil {
		return err
	}
	session.TuneKeepAlive(s.HeartbeatInterval)
	runCtx, stopSession := context.WithCancel(ctx)
	defer stopSession()
	// The queue needs the session to send, and the session tells the queue
	// of receipts: the callback closes that loop without a package cycle.
	var queue *dispatch.Queue
	sess, err := session.New(runCtx, session.Options{
		CredentialsDir:    dir.CredentialsDir(),
		SpoolDir:          dir.SpoolDir(),
		MasterKey:         key,
		DB:                db,
		HeartbeatInterval: s.HeartbeatInterval,
		Log:               log.WithName("session"),
		ConfigureClient:   configure,
		OnReceipt: func(ids []string, status string) {
			if _, err := queue.AdvanceStatus(runCtx, ids, dispatch.Status(status)); err != nil {
				log.Error(err, "apply receipt")
			}
		},
	})
	if err != nil {
		return err
	}
	queue = dispatch.New(dispatch.Options{
		DB: db, Batcher: writer, Sender: sess, Schedule: s.RetrySchedule, Log: log.WithName("dispatch"),
	})
	if err := queue.SweepSpool(ctx, dir.SpoolDir()); err != nil {
		return fmt.Errorf("sweep spool: %w", err)
	}
	sessionDone := make(chan error, 1)
	go func() { sessionDone <- sess.Run(runCtx) }()
	queueDone := make(chan error, 1)
	go func() { queueDone <- queue.Run(runCtx) }()
	defer func() {
		stopSession()
		if err := <-queueDone; err != nil {
			log.Error(err, "send queue stopped")
		}
	}()

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.ListenAddr)
	if err != nil {
		stopSession()
		return errors.Join(fmt.Errorf("listen on %s: %w", s.ListenAddr, err), <-sessionDone)
	}
	srv := &http.Server{
		Handler: api.NewRouter(api.Deps{
			Version:    version.Version,
			Started:    time.Now(),
			Session:    sess,
			AdminToken: s.AdminToken,
			Messages:   queue,
			Send:       api.SendConfig{APIKey: s.APIKey, SpoolDir: dir.SpoolDir(), MaxFileSize: s.MaxFileSize},
			Log:        log.WithName("api"),
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	log.Info("bridge listening", "addr", ln.Addr().String(), "version", version.Version, "dataDir", dir.Root(),
		"session", sess.Status().State)

	httpDone := make(chan error, 1)
	go func() { httpDone <- srv.Serve(ln) }()
	select {
	case err := <-httpDone:
		stopSession()
		return errors.Join(fmt.Errorf("http server: %w", err), <-sessionDone)
	case err := <-sessionDone:
		_ = srv.Close()
		return fmt.Errorf("session: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	httpErr := srv.Shutdown(shutdownCtx)
	stopSession()
	sessErr := <-sessionDone
	return errors.Join(httpErr, sessErr)
}
