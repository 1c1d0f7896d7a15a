package whatsapp

import (
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// event is what moves the session's state: whatsmeow's events, mapped at
// the boundary by linkEvent, and the package's own happenings. The state
// policy (transition) sees only these, never a whatsmeow type.
type event interface{ sessionEvent() }

type (
	// linkStarted: a QR or pairing-code attempt opened a socket.
	linkStarted struct{}
	// linkEnded: the attempt ended without a link (QR codes ran out, error).
	linkEnded struct{ reason bridge.Reason }
	// paired: a phone linked the account (whatsmeow's PairSuccess).
	paired struct{ account string }
	// pairFailed: the phone's link was refused (PairError).
	pairFailed struct{}
	// connectStarted: a connect with stored credentials began.
	connectStarted struct{}
	// connectFailed: the connect with stored credentials did not succeed.
	connectFailed struct{}
	// loggedIn: whatsmeow's Connected, with the account read from its store.
	loggedIn struct{ account, pushName string }
	// keepAliveLost: a keepalive ping went unanswered (KeepAliveTimeout).
	keepAliveLost struct{}
	// keepAliveBack: pings are answered again (KeepAliveRestored).
	keepAliveBack struct{}
	// heartbeat: the periodic check found the connection alive.
	heartbeat struct{}
	// socketClosed: the socket closed without a reason from the server
	// (Disconnected); whatsmeow reconnects by itself.
	socketClosed struct{}
	// cutOff: the server ended the connection for a reason (stream
	// replaced, temporary ban, client outdated, connect failure).
	cutOff struct{ reason bridge.Reason }
	// loggedOut: WhatsApp removed the device (LoggedOut).
	loggedOut struct{}
	// wiped: the credentials were deleted (logout through the API).
	wiped struct{ reason bridge.Reason }
	// diskLow: DATA_DIR's free space fell below its reserve; the bridge
	// disconnects until it is back.
	diskLow struct{}
)

func (linkStarted) sessionEvent()    {}
func (linkEnded) sessionEvent()      {}
func (paired) sessionEvent()         {}
func (pairFailed) sessionEvent()     {}
func (connectStarted) sessionEvent() {}
func (connectFailed) sessionEvent()  {}
func (loggedIn) sessionEvent()       {}
func (keepAliveLost) sessionEvent()  {}
func (keepAliveBack) sessionEvent()  {}
func (heartbeat) sessionEvent()      {}
func (socketClosed) sessionEvent()   {}
func (cutOff) sessionEvent()         {}
func (loggedOut) sessionEvent()      {}
func (wiped) sessionEvent()          {}
func (diskLow) sessionEvent()        {}

// linkEvent maps a whatsmeow event of client cli to the session event it
// means; nil for the events that do not concern the link (messages,
// receipts, …). cli is read only for Connected, whose account whatsmeow
// keeps in its store.
func linkEvent(cli *whatsmeow.Client, ev any) event {
	switch e := ev.(type) {
	case *events.Connected:
		account := ""
		if cli.Store.ID != nil {
			account = cli.Store.ID.User
		}
		return loggedIn{account: account, pushName: cli.Store.PushName}
	case *events.PairSuccess:
		return paired{account: e.ID.User}
	case *events.PairError:
		return pairFailed{}
	case *events.KeepAliveTimeout:
		return keepAliveLost{}
	case *events.KeepAliveRestored:
		return keepAliveBack{}
	case *events.Disconnected:
		return socketClosed{}
	case *events.StreamReplaced:
		return cutOff{reason: contract.ReasonStreamReplaced}
	case *events.TemporaryBan:
		return cutOff{reason: contract.ReasonTemporaryBan}
	case *events.ClientOutdated:
		return cutOff{reason: contract.ReasonClientOutdated}
	case *events.ConnectFailure:
		return cutOff{reason: contract.ReasonConnectFailure}
	case *events.LoggedOut:
		return loggedOut{}
	}
	return nil
}
