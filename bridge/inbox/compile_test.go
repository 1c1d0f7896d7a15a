package inbox

import (
	"fmt"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Storing an incoming message, its history entry, its contact's pair and
// its webhook event, compiles no statement once warm: each is prepared
// once per connection (issue 47: SQLite parsing a statement costs more
// than running it, in wasm). 200 messages from 4 contacts named by LID and
// number compile nothing more often than the pool has connections.
func TestStoringIncomingMessagesCompilesNothingPerMessage(t *testing.T) {
	compiles := testutil.WatchCompiles()
	f := newFixture(t, newHookReceiver(t).srv.URL)
	message := func(i int) bridge.Incoming {
		c := i % 4
		in := text(fmt.Sprintf("W%d", i), "hi")
		in.FromPhone = bridge.PhoneRecipient(fmt.Sprintf("49151000020%02d", c))
		in.From, in.Chat = in.FromPhone, in.FromPhone
		in.FromLID = bridge.Recipient{Kind: bridge.RecipientLID, ID: fmt.Sprintf("1000000%02d", c)}
		return in
	}
	for i := range 4 { // warm: every statement prepared, every pair known
		f.store(t, message(i))
	}
	before := compiles.Snapshot()
	for i := 4; i < 204; i++ {
		f.store(t, message(i))
	}
	compiles.AtMost(t, before, f.db.Stats().OpenConnections, "200 incoming messages")
}
