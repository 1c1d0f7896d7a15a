package sendqueue

import "github.com/msgbridge/msgbridge/bridge"

// BlockList tells whether the account blocked a recipient (the whatsapp
// session's copy of WhatsApp's block list): a message to a blocked contact
// is refused before it is stored, as the phone refuses it, instead of
// failing later where nobody looks.
type BlockList interface {
	Blocked(r bridge.Recipient) bool
}
