package whatsapp

import (
	"testing"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/contract"
)

// Every whatsmeow event the state policy follows maps to its own session
// event; the rest map to nothing.
func TestLinkEvent(t *testing.T) {
	for _, c := range []struct {
		ev   any
		want event
	}{
		{&events.PairSuccess{ID: types.NewADJID("4915112345678", 0, 3)}, paired{"4915112345678"}},
		{&events.PairError{}, pairFailed{}},
		{&events.KeepAliveTimeout{ErrorCount: 1}, keepAliveLost{}},
		{&events.KeepAliveRestored{}, keepAliveBack{}},
		{&events.Disconnected{}, socketClosed{}},
		{&events.StreamReplaced{}, cutOff{contract.ReasonStreamReplaced}},
		{&events.TemporaryBan{}, cutOff{contract.ReasonTemporaryBan}},
		{&events.ClientOutdated{}, cutOff{contract.ReasonClientOutdated}},
		{&events.ConnectFailure{}, cutOff{contract.ReasonConnectFailure}},
		{&events.LoggedOut{}, loggedOut{}},
		{&events.Message{}, nil},
		{&events.Receipt{}, nil},
	} {
		if got := linkEvent(nil, c.ev); got != c.want {
			t.Errorf("%T: got %#v, want %#v", c.ev, got, c.want)
		}
	}
}
