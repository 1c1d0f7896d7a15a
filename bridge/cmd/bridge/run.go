package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge/settings"
	"github.com/msgbridge/msgbridge/contract"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGTERM;
// Kubernetes allows 30 s before SIGKILL by default.
const shutdownGrace = 20 * time.Second

// serve builds the bridge and runs it until ctx ends; then it drains the
// HTTP server and stops the rest.
func serve(ctx context.Context, s *settings.Settings, stdout io.Writer) error {
	a, err := build(ctx, s, stdout)
	if err != nil {
		return err
	}
	defer a.close()
	return a.run(ctx)
}

// backgroundPart is one of the bridge's background loops.
type backgroundPart struct {
	name string
	run  func(context.Context) error
}

// run serves HTTP and runs the background parts until ctx ends or one of
// them fails; then it drains the server and stops the parts.
func (a *app) run(ctx context.Context) error {
	parts := []backgroundPart{
		{"whatsapp session", a.session.Run},
		{"send queue", a.queue.Run},
		{"uploads expiry", a.uploads.Run},
		{"webhooks", a.webhooks.Run},
		{"incoming history", a.inbox.Run},
		{"media downloads", a.downloads.Run},
		{"media downloads on connect", a.downloadsOnConnect},
		{"disk guard", a.disk.Run},
		{"message retention", func(ctx context.Context) error {
			return a.messages.RunRetention(ctx, a.settings.MessageRetention)
		}},
		{"approval expiry", func(ctx context.Context) error {
			return a.queue.RunApprovalExpiry(ctx, a.settings.ApprovalTimeout)
		}},
	}
	partsCtx, stopParts := context.WithCancel(ctx)
	defer stopParts()
	done := make(chan error, len(parts)+1)
	// The server has served since build listened.
	go func() { done <- fmt.Errorf("http server: %w", <-a.served) }()
	for _, p := range parts {
		go func() {
			if err := p.run(partsCtx); err != nil {
				done <- fmt.Errorf("%s: %w", p.name, err)
				return
			}
			done <- nil
		}()
	}
	a.log.Info("bridge listening", "addr", a.listener.Addr().String(), "version", contract.BuildVersion(),
		"dataDir", a.dir.Root(), "session", a.session.Status().State)

	var failure error
	select {
	case failure = <-done:
	case <-ctx.Done():
		a.log.Info("shutting down")
	}
	return a.stop(failure, stopParts, done, len(parts)+1)
}

// stop drains the HTTP server, stops the parts and collects every part's
// and the server's result; failure is the one already received, if any.
func (a *app) stop(failure error, stopParts context.CancelFunc, done <-chan error, running int) error {
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	errs := []error{failure, a.server.Shutdown(shutdownCtx)}
	stopParts()
	if failure != nil {
		running--
	}
	for range running {
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
