// Command wasim runs the WhatsApp network simulator as a process, for
// end-to-end tests of a bridge built with the `wasim` tag.
//
//	go run ./bridge/wasim/cmd/wasim -listen 127.0.0.1:7780 -addr 127.0.0.1:7781
//
// It prints the simulator's TLS address and root public key; give both to the
// bridge (wasimclient.InstallRootKey and wasimclient.Configure). The HTTP
// control API on -listen creates users, links clients, sends messages and
// injects faults; see bridge/wasim/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wasim:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:7780", "address of the HTTP control API")
	addr := flag.String("addr", "127.0.0.1:7781", "address of the simulator's TLS listener (WebSocket and media)")
	rootKey := flag.String("root-key", os.Getenv("WASIM_ROOT_PRIVATE_KEY"), "root private key, 64 hex characters (default: $WASIM_ROOT_PRIVATE_KEY, else random)")
	logLevel := flag.String("log-level", "INFO", "DEBUG, INFO, WARN or ERROR")
	flag.Parse()

	opts := wasim.Options{Addr: *addr, Log: waLog.Stdout("wasim", *logLevel, false)}
	if *rootKey != "" {
		key, err := wasim.RootKeyFromHex(*rootKey)
		if err != nil {
			return fmt.Errorf("-root-key: %w", err)
		}
		opts.RootKey = key
	}
	sim, err := wasim.New(opts)
	if err != nil {
		return err
	}
	defer sim.Close()

	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", *listen)
	if err != nil {
		return fmt.Errorf("control API: %w", err)
	}
	srv := &http.Server{Handler: sim.ControlHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("wasim: simulator (WebSocket and media, TLS) at %s\n", sim.Addr())
	fmt.Printf("wasim: root public key %s\n", sim.RootPublicKeyHex())
	fmt.Printf("wasim: control API at http://%s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
