package wasim

import (
	"sync"
	"time"
)

// Login is one linked device's successful login: the <success> WhatsApp
// answered its handshake with.
type Login struct {
	// Account is the phone number of the account the device belongs to.
	Account string
	At      time.Time
}

// loginBook records every successful login, as WhatsApp sees a fleet of
// devices come back: how many connect together, and how far apart.
type loginBook struct {
	mu  sync.Mutex
	all []Login
}

func (b *loginBook) record(account string, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = append(b.all, Login{Account: account, At: at})
}

// Logins are the successful logins of linked devices since start, oldest
// first.
func (s *Simulator) Logins() []Login {
	s.logins.mu.Lock()
	defer s.logins.mu.Unlock()
	return append([]Login(nil), s.logins.all...)
}
