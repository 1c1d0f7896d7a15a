// Package session keeps the bridge's link to one WhatsApp account: the
// whatsmeow client on its encrypted credentials, linking by QR or pairing
// code, reconnects, the heartbeat, groups and logout. Its state machine is the
// pure transition function; this file wires whatsmeow's events into it.
package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Errors the API maps to status codes.
var (
	// ErrLinked: the operation needs an unlinked session (409).
	ErrLinked = errors.New("an account is already linked; log out first")
	// ErrNotLinked: the operation needs a linked, connected session (503).
	ErrNotLinked = errors.New("no linked WhatsApp session is connected")
)

// maxReconnectSteps caps whatsmeow's linear reconnect backoff (2 s a failed
// attempt) at one minute, so a long outage is noticed soon after it ends.
const maxReconnectSteps = 30

// logoutTimeout bounds the network part of a logout; the local wipe follows
// whether or not WhatsApp answered.
const logoutTimeout = 10 * time.Second

// Options configures a Manager.
type Options struct {
	// CredentialsDir holds session.db; logout empties it.
	CredentialsDir string
	// MasterKey is the decoded ENCRYPTION_KEY.
	MasterKey []byte
	// DB is bridge.db, where the state and the heartbeat are kept.
	DB *sql.DB
	// HeartbeatInterval is how often a live connection's heartbeat is recorded.
	HeartbeatInterval time.Duration
	Log               logr.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// SpoolDir is where attachments are encrypted before upload.
	SpoolDir string
	// OnReceipt, when set, hears the receipts of sent messages: their
	// WhatsApp IDs and "Delivered" or "Read". It runs on whatsmeow's event
	// goroutine and must not block for long.
	OnReceipt func(ids []string, status string)
	// Batcher, when set, writes the state row (DB's one writer).
	Batcher *sqlite.Batcher
	// OnStateTx, when set with Batcher, hears every change of the state or
	// its reason inside the transaction that stores it.
	OnStateTx func(ctx context.Context, tx *sql.Tx, s Status) error
	// OnMessage, when set, hears every incoming message a person wrote. It
	// runs on whatsmeow's event goroutine before the message is
	// acknowledged to WhatsApp (SynchronousAck): once it returns without
	// error, the message may be gone from the server.
	OnMessage func(ctx context.Context, in bridge.Incoming) error
	// OnReconnect, when set, hears every login after the first of this
	// process, for metrics.
	OnReconnect func()
	// ConfigureClient adjusts every new whatsmeow client before it connects.
	// Production leaves it nil; the simulator build points the client at
	// bridge/wasim.
	ConfigureClient func(*whatsmeow.Client)
}

// Manager owns the whatsmeow client of one account.
type Manager struct {
	opts   Options
	states stateStore
	waLog  waLog.Logger
	log    logr.Logger

	// bgCtx carries the values of New's context but is never cancelled: it
	// is what whatsmeow's sockets and the state writes run on. Cancelling a
	// socket's context while Disconnect closes it races inside whatsmeow, and
	// the last state write must outlive the shutdown signal. Run ends the
	// client with an orderly Disconnect instead.
	bgCtx context.Context

	// linked mirrors "the store holds a linked device". whatsmeow writes the
	// device's ID from its own goroutines while pairing, so the ID cannot be
	// read safely; this is set from the store before any client runs, then
	// from PairSuccess, LoggedOut and logout.
	linked atomic.Bool
	// loggedInBefore tells a reconnect from the first login.
	loggedInBefore atomic.Bool

	// opMu serialises the operations that replace or reconfigure the client
	// (link, logout, reset). It is never taken by event handlers.
	opMu  sync.Mutex
	creds *credentials
	// client is the current whatsmeow client, replaced (under opMu) by
	// logout; read without a lock, because event handlers must never wait
	// for an operation that waits for whatsmeow.
	client atomic.Pointer[whatsmeow.Client]

	// mu guards status and link, and is never held across a network call:
	// whatsmeow delivers events from its receive loop, which must keep going.
	mu      sync.Mutex
	status  Status
	link    *linkAttempt
	linkSeq uint64 // the last link attempt's seq

	// subMu guards subs, the Subscribe channels; it is taken under mu, never
	// the other way round.
	subMu sync.Mutex
	subs  map[chan struct{}]struct{}
}

// New opens the credentials (a wrong ENCRYPTION_KEY stops here, before any
// write) and sets the start-up state: connecting when credentials exist,
// unpaired otherwise, never connected.
func New(ctx context.Context, opts Options) (*Manager, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Manager{opts: opts, states: stateStore{db: opts.DB, batcher: opts.Batcher, onChange: opts.OnStateTx}, log: opts.Log, waLog: newWALogger(opts.Log), bgCtx: context.WithoutCancel(ctx)}
	creds, err := openCredentials(ctx, opts.CredentialsDir+"/session.db", opts.MasterKey, m.waLog.Sub("store"))
	if err != nil {
		return nil, err
	}
	stored, err := m.states.load(ctx)
	if err != nil {
		_ = creds.close()
		return nil, err
	}
	m.status = initialStatus(stored, creds.linked())
	changed := m.status.State != stored.State || m.status.Reason != stored.Reason
	if err := m.states.save(ctx, m.status, opts.Now(), changed); err != nil {
		_ = creds.close()
		return nil, err
	}
	m.creds = creds
	m.linked.Store(creds.linked())
	m.client.Store(m.newClient(creds))
	return m, nil
}

func (m *Manager) newClient(creds *credentials) *whatsmeow.Client {
	cli := whatsmeow.NewClient(creds.device, m.waLog.Sub("client"))
	cli.EnableAutoReconnect = true
	// Acks only after the event handlers return: an incoming message is in
	// the webhook outbox on disk before WhatsApp may drop its copy.
	cli.SynchronousAck = true
	// A first connect that fails for a network reason retries in the
	// background, like any later reconnect.
	cli.InitialAutoReconnect = true
	cli.AutoReconnectHook = func(error) bool {
		// Runs on whatsmeow's reconnect goroutine, the only one that grows the
		// counter, just before it computes the next delay.
		cli.AutoReconnectErrors = min(cli.AutoReconnectErrors, maxReconnectSteps)
		return true
	}
	if m.opts.ConfigureClient != nil {
		m.opts.ConfigureClient(cli)
	}
	cli.AddEventHandler(func(ev any) { m.handleEvent(cli, ev) })
	return cli
}

// Run connects when credentials exist and records heartbeats until ctx ends;
// then it disconnects and closes the credentials.
func (m *Manager) Run(ctx context.Context) error {
	m.opMu.Lock()
	if m.linked.Load() {
		m.connect()
	}
	m.opMu.Unlock()

	ticker := time.NewTicker(m.opts.HeartbeatInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			m.opMu.Lock()
			defer m.opMu.Unlock()
			m.client.Load().Disconnect()
			return m.creds.close()
		case <-ticker.C:
			m.beat()
		}
	}
}

// connect opens the socket with stored credentials; opMu is held.
func (m *Manager) connect() {
	m.apply(connectStarted{})
	if err := m.client.Load().ConnectContext(m.bgCtx); err != nil {
		m.log.Error(err, "connect with stored credentials")
		m.apply(connectFailed{})
	}
}

// beat records a heartbeat when the link is up. transition refuses it for any
// state but connected, which every disconnect event and KeepAliveTimeout
// leave the moment whatsmeow notices, so a ghost connection's heartbeat stops
// advancing. (whatsmeow's own IsConnected is not safe to call while the
// server closes the socket: it reads the connection without its lock.)
func (m *Manager) beat() {
	if m.client.Load().IsLoggedIn() {
		m.apply(heartbeat{})
	}
}

// Status is the session's current status.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// apply runs ev through the state policy and stores the result when it
// changed.
func (m *Manager) apply(ev any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applyLocked(ev)
}

func (m *Manager) applyLocked(ev any) {
	now := m.opts.Now()
	next, changed := transition(m.status, ev, now)
	if !changed {
		return
	}
	prev := m.status
	m.status = next
	m.notify()
	if err := m.states.save(m.bgCtx, next, now, prev.State != next.State || prev.Reason != next.Reason); err != nil {
		// The in-memory state stays right; the next change rewrites the row.
		m.log.Error(err, "persist session state")
	}
	if prev.State != next.State || prev.Reason != next.Reason {
		m.log.Info("session state", "state", next.State, "reason", next.Reason, "previous", prev.State)
	}
}

// handleEvent receives every whatsmeow event of client cli.
func (m *Manager) handleEvent(cli *whatsmeow.Client, ev any) {
	if cli != m.client.Load() {
		return // a replaced client's last events (after logout) say nothing now
	}
	switch e := ev.(type) {
	case *events.Connected:
		account, pushName := "", cli.Store.PushName
		if cli.Store.ID != nil {
			account = cli.Store.ID.User
		}
		m.apply(loggedIn{account: account, pushName: pushName})
		if m.loggedInBefore.Swap(true) && m.opts.OnReconnect != nil {
			m.opts.OnReconnect()
		}
	case *events.Receipt:
		m.receipt(e)
	case *events.Message:
		m.message(cli, e)
	case *events.PushNameSetting:
		m.mu.Lock()
		if m.status.Connected() && e.Action != nil {
			m.status.PushName = e.Action.GetName()
			m.notify()
		}
		m.mu.Unlock()
	case *events.PairSuccess:
		m.linked.Store(true)
		m.apply(ev)
	// StreamReplaced, TemporaryBan and ClientOutdated are permanent; whatsmeow
	// itself marks those disconnects as expected and does not reconnect (a
	// Disconnect from here would race its own teardown of the socket).
	case *events.LoggedOut:
		m.linked.Store(false)
		m.apply(ev)
		// whatsmeow deleted the device; start over with empty credentials so
		// that a new link can begin.
		go m.reset(cli)
	default:
		m.apply(ev)
	}
}

// reset replaces a logged-out client by a fresh, unlinked one.
func (m *Manager) reset(old *whatsmeow.Client) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if old != m.client.Load() {
		return
	}
	if err := m.replaceClientLocked(); err != nil {
		m.log.Error(err, "reset credentials after logout")
	}
}

// replaceClientLocked disconnects the client, wipes the credentials directory
// and opens an empty store with a new client; opMu is held.
func (m *Manager) replaceClientLocked() error {
	m.client.Load().Disconnect()
	m.endLink()
	if err := m.creds.close(); err != nil {
		m.log.Error(err, "close credentials store")
	}
	if err := wipeDir(m.opts.CredentialsDir); err != nil {
		return err
	}
	m.linked.Store(false)
	creds, err := openCredentials(m.bgCtx, m.opts.CredentialsDir+"/session.db", m.opts.MasterKey, m.waLog.Sub("store"))
	if err != nil {
		return fmt.Errorf("reopen credentials: %w", err)
	}
	m.creds = creds
	m.client.Store(m.newClient(creds))
	return nil
}

// Logout unlinks the account: it tells WhatsApp when reachable, then always
// deletes the local credentials, so an unreachable network never leaves an
// account linked on disk.
func (m *Manager) Logout(ctx context.Context) error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if cli := m.client.Load(); m.linked.Load() && m.Status().Connected() {
		lctx, cancel := context.WithTimeout(ctx, logoutTimeout)
		err := cli.Logout(lctx)
		cancel()
		if err != nil {
			m.log.Info("logout request not confirmed by WhatsApp; wiping local credentials anyway", "level", "warn", "error", err.Error())
		}
	}
	if err := m.replaceClientLocked(); err != nil {
		return err
	}
	m.apply(wiped{reason: ReasonUserLogout})
	return nil
}

// Group is a joined group as GET /session/groups lists it.
type Group struct {
	ID           string
	Subject      string
	Participants int
}

// Groups lists the account's joined groups.
func (m *Manager) Groups(ctx context.Context) ([]Group, error) {
	cli := m.client.Load()
	if !cli.IsLoggedIn() {
		return nil, ErrNotLinked
	}
	infos, err := cli.GetJoinedGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	groups := make([]Group, 0, len(infos))
	for _, g := range infos {
		// ParticipantCount may be 0 in the listing; the list itself is right.
		groups = append(groups, Group{ID: g.JID.String(), Subject: g.Name, Participants: len(g.Participants)})
	}
	return groups, nil
}

// message passes an incoming message on. A failure to store it is logged:
// whatsmeow offers no way to refuse the ack from a handler.
func (m *Manager) message(cli *whatsmeow.Client, e *events.Message) {
	if m.opts.OnMessage == nil {
		return
	}
	if in, ok := incoming(m.bgCtx, cli, e); ok {
		if err := m.opts.OnMessage(m.bgCtx, in); err != nil {
			m.log.Error(err, "store incoming message event", "whatsapp_id", in.WhatsAppID)
		}
	}
}

// receipt passes delivered and read receipts of our own messages on.
func (m *Manager) receipt(e *events.Receipt) {
	if m.opts.OnReceipt == nil || e.IsFromMe {
		return // IsFromMe: our other devices reading; not the recipient
	}
	var status string
	switch e.Type {
	case types.ReceiptTypeDelivered:
		status = "Delivered"
	case types.ReceiptTypeRead:
		status = "Read"
	default:
		return
	}
	m.opts.OnReceipt(e.MessageIDs, status)
}
