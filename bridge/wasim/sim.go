package wasim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
)

// Options configure a Simulator. The zero value is ready to use in tests.
type Options struct {
	// Addr is the TCP address of the TLS listener (WebSocket and media).
	// Empty means 127.0.0.1 with a free port.
	Addr string
	// RootKey signs the simulator's Noise certificate chain. Nil means the
	// package's test root key, which Install puts into whatsmeow.
	RootKey *keys.KeyPair
	// Log receives the simulator's diagnostics. Nil discards them.
	Log waLog.Logger
	// CloseGrace is how long the server waits after a stream error or a
	// connect failure before it closes the socket, so that the client
	// handles the node before it sees the socket end (as with WhatsApp's
	// servers). Zero means 1 s.
	CloseGrace time.Duration
}

// Simulator is a WhatsApp network: a TLS server for the WebSocket protocol
// and media, the users of the network and their groups. All methods are
// safe for concurrent use.
type Simulator struct {
	opts      Options
	log       waLog.Logger
	root      *keys.KeyPair
	static    *keys.KeyPair // Noise static key of the server
	certChain []byte
	srv       *httptest.Server
	directory *keyDirectory
	media     *mediaStore

	ctx    context.Context // cancelled by Close; parent of every connection
	cancel context.CancelFunc
	wg     sync.WaitGroup // connection handlers and helper goroutines

	mu        sync.Mutex
	closed    bool
	conns     map[*conn]struct{}
	users     map[string]*User // by phone number
	lids      map[string]*User // by LID user part
	groups    map[types.JID]*Group
	qrRefs    map[string]*conn        // pair-device refs of connections waiting for a scan
	codePairs map[string]*codePairing // pairing-code links by pairing ref
	changed   chan struct{}           // closed and replaced when devices link, log in or leave
	admin     groupAdmin              // revoked invite codes, photo ids (groupadmin.go)

	records  records        // usync contact questions and chat states (actions.go)
	versions clientVersions // the oldest client version accepted, and the current one (clientversion.go)
	trust    trustTokens    // trusted-contact tokens phones issued (tctoken.go)
	calls    callBook       // what phones saw of calls (calls.go)
	logins   loginBook      // every successful login of a linked device (logins.go)
	blocks   blockBook      // every user's block list (blocklist.go)
	profiles profileBook    // users' about texts and pictures (profile.go)
	channels channelBook    // channels and their posts (newsletter.go)
}

// New starts a simulator. Call Close when done.
func New(opts Options) (*Simulator, error) {
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = time.Second
	}
	s := &Simulator{
		opts:      opts,
		log:       opts.Log,
		root:      opts.RootKey,
		static:    keys.NewKeyPair(),
		directory: newKeyDirectory(),
		media:     newMediaStore(),
		conns:     map[*conn]struct{}{},
		users:     map[string]*User{},
		lids:      map[string]*User{},
		groups:    map[types.JID]*Group{},
		qrRefs:    map[string]*conn{},
		codePairs: map[string]*codePairing{},
		changed:   make(chan struct{}),
		versions:  clientVersions{current: store.GetWAVersion()},
	}
	if s.log == nil {
		s.log = waLog.Noop
	}
	if s.root == nil {
		s.root = testRootKey
	}
	var err error
	if s.certChain, err = buildCertChain(s.root, *s.static.Pub); err != nil {
		return nil, fmt.Errorf("wasim: certificate chain: %w", err)
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wasim: listen: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.srv = httptest.NewUnstartedServer(s.routes())
	// Clients that hang up mid-handshake are normal here (faults, Close).
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	_ = s.srv.Listener.Close() // the placeholder listener httptest opened
	s.srv.Listener = ln
	s.srv.StartTLS()
	return s, nil
}

// Start is New for a test: it calls Install, fails the test on error and
// closes the simulator when the test ends. Close a test's whatsmeow clients
// before the simulator (register their cleanup after Start), so that the
// simulator's handlers end promptly. Under -short it skips the test: the
// quick tier starts no simulator, and this is the one place that says so.
func Start(tb testing.TB, opts ...Options) *Simulator {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: starts the WhatsApp simulator")
	}
	Install()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func (s *Simulator) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws/chat", s.serveWebSocket)
	mux.HandleFunc("GET /{$}", s.serveWebPage)
	mux.HandleFunc("POST /mms/{type}/{token}", s.serveMediaUpload)
	mux.HandleFunc("POST /newsletter/{type}/{token}", s.serveMediaUpload)
	mux.HandleFunc("GET "+mediaPathPrefix+"{file}", s.serveMediaDownload)
	return mux
}

// Close disconnects every client, stops the server and waits for all of the
// simulator's goroutines. It is idempotent.
func (s *Simulator) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.notifyLocked()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.cancel()
	for _, c := range conns {
		c.closeNow()
	}
	s.srv.Close()
	s.wg.Wait()
	return nil
}

// notifyLocked wakes everyone waiting for a device state change.
func (s *Simulator) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor blocks until cond (called under s.mu) holds or ctx ends.
func (s *Simulator) waitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok, changed, closed := cond(), s.changed, s.closed
		s.mu.Unlock()
		switch {
		case ok:
			return nil
		case closed:
			return ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// goTracked runs f in a goroutine that Close waits for. It reports false
// (and does not run f) once the simulator is closed.
func (s *Simulator) goTracked(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// Addr is the host:port of the TLS listener that serves the WebSocket
// (wss://web.whatsapp.com/ws/chat) and media (https://mmg.whatsapp.net).
func (s *Simulator) Addr() string { return s.srv.Listener.Addr().String() }

// RootPublicKey is the key whatsmeow.WACertPubKey must hold for clients of
// this simulator.
func (s *Simulator) RootPublicKey() [32]byte { return *s.root.Pub }

// RootPublicKeyHex is RootPublicKey as 64 hex characters, the form
// wasimclient.InstallRootKey takes.
func (s *Simulator) RootPublicKeyHex() string { return hex.EncodeToString(s.root.Pub[:]) }

// Certificate is the TLS certificate of the listener; it is valid for
// "example.com" and 127.0.0.1.
func (s *Simulator) Certificate() *x509.Certificate { return s.srv.Certificate() }

// TLSConfig trusts the simulator's certificate whatever host name a client
// asks for (web.whatsapp.com, mmg.whatsapp.net).
func (s *Simulator) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(s.srv.Certificate())
	return &tls.Config{RootCAs: pool, ServerName: "example.com", MinVersion: tls.VersionTLS12}
}

// Wire makes cli connect to this simulator (websocket before and after
// login, and media) with full TLS verification.
func (s *Simulator) Wire(cli *whatsmeow.Client) {
	wasimclient.ConfigureTLS(cli, s.Addr(), s.TLSConfig())
}

// HTTPClient is an HTTP client that reaches the simulator's listener for any
// URL, e.g. to fetch a media URL from a message.
func (s *Simulator) HTTPClient() *http.Client {
	return wasimclient.NewHTTPClient(s.Addr(), s.TLSConfig())
}

// ErrClosed is returned by operations on a closed simulator.
var ErrClosed = errors.New("wasim: simulator closed")
