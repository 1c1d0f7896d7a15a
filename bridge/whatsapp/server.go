package whatsapp

import (
	"net/http"
	"sync"

	"go.mau.fi/whatsmeow"
)

// Server points the client at a stand-in for WhatsApp's servers: the
// simulator build (-tags wasim) and the tests use it. Production leaves
// Options.Server nil and talks to WhatsApp.
type Server struct {
	// HTTPClient carries the websocket (before and after login) and media;
	// it must reach the stand-in whatever host a request names.
	HTTPClient *http.Client
	// RootKey is the public key that signs the stand-in's Noise certificate
	// chain, trusted in place of WhatsApp's.
	RootKey [32]byte
}

// rootKeyMu serialises trustRootKey.
var rootKeyMu sync.Mutex

// trustRootKey makes whatsmeow accept certificate chains signed by key.
// whatsmeow keeps the key in a process-wide variable that its handshakes
// read without a lock, so it is written only when it changes: once, before
// the process's first client (all Managers of a process use one server).
func trustRootKey(key [32]byte) {
	rootKeyMu.Lock()
	defer rootKeyMu.Unlock()
	if whatsmeow.WACertPubKey != key {
		whatsmeow.WACertPubKey = key
	}
}

// use points cli at the server.
func (s *Server) use(cli *whatsmeow.Client) {
	cli.SetWebsocketHTTPClient(s.HTTPClient)
	cli.SetPreLoginHTTPClient(s.HTTPClient)
	cli.SetMediaHTTPClient(s.HTTPClient)
}
