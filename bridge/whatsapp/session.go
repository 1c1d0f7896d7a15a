// Package whatsapp keeps the bridge's link to one WhatsApp account: the
// whatsmeow client on its encrypted credentials, linking by QR or pairing
// code, reconnects, the heartbeat, groups, sending and logout. It is the
// only package of the bridge that imports whatsmeow: its API speaks the
// domain's types (it implements bridge.Session) and reports through its
// ports: what it receives to Events, statuses and receipts to the message
// log (MessageLog), events to the webhook outbox (Outbox). Its state
// machine is the pure transition function over the package's own events,
// to which events.go maps whatsmeow's.
package whatsapp

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/types"
	waLog "go.mau.fi/whatsmeow/util/log"
	"golang.org/x/sync/singleflight"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/notify"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/contract"
)

// maxReconnectSteps caps whatsmeow's linear reconnect backoff (2 s a failed
// attempt) at one minute, so a long outage is noticed soon after it ends.
const maxReconnectSteps = 30

// logoutTimeout bounds the network part of a logout; the local wipe follows
// whether or not WhatsApp answered.
const logoutTimeout = 10 * time.Second

// Events hears what the link receives; the wiring implements it. What
// the session reports itself goes straight to its ports: statuses and
// receipts to the message log (MessageLog), events to the webhook outbox
// (Outbox).
type Events interface {
	// Incoming hands a received message to the store and returns at once;
	// the channel yields nil once it is committed, then the message is acked
	// to WhatsApp, or an error, which refuses the ack. Messages are stored in
	// the order of the calls.
	Incoming(ctx context.Context, in bridge.Incoming) <-chan error
	// Reconnected: a login after the first of this process (metrics).
	Reconnected()
}

// MessageLog is the outgoing message log as the session reports to it
// (*sendqueue.MessageLog).
type MessageLog interface {
	// SessionChanged runs inside the transaction that stores a new state:
	// a logout fails the waiting messages of the account that went, a link
	// adopts those accepted while none was.
	SessionChanged(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus) error
	// Receipt: messages reached Delivered or Read.
	Receipt(ctx context.Context, r bridge.Receipt) error
}

// Outbox is the part of the webhook outbox (bridge.Outbox) the session
// reports to: its state changes, in the transaction that stores them, and
// the changes of the account's groups, before WhatsApp gets their ack.
type Outbox interface {
	Enabled() bool
	SessionStatus(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus) error
	GroupChanged(ctx context.Context, tx *sql.Tx, c bridge.GroupChange) error
}

// Options configures a Session.
type Options struct {
	// CredentialsDir holds session.db; logout empties it.
	CredentialsDir string
	// MasterKey is the decoded ENCRYPTION_KEY.
	MasterKey []byte
	// CredentialsDB, when set, is CredentialsDir's session.db already open
	// (OpenExistingCredentials); the Session then owns it. Nil: New opens
	// (or creates) it.
	CredentialsDB *sql.DB
	// DB is bridge.db, where the state and the heartbeat are kept.
	DB *sql.DB
	// Batcher, when set, writes the state row (DB's one writer).
	Batcher *sqlite.Batcher
	// HeartbeatInterval is how often a live connection's heartbeat is
	// recorded; a send waits at most a few of them.
	HeartbeatInterval time.Duration
	Log               logr.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// SpoolDir is where attachments are encrypted before upload.
	SpoolDir string
	// Events hears messages and reconnects; Messages the state changes and
	// the receipts; Outbox the state changes and the group changes (nil:
	// none of these hears them). Incoming and Receipt run on whatsmeow's
	// event goroutine and hold up the next event while they run.
	Events   Events
	Messages MessageLog
	Outbox   Outbox
	// Server, when set, replaces WhatsApp's servers (the simulator).
	Server *Server
	// Quotes finds the messages replies quote (nil: none is known, and a
	// reply quotes by id alone).
	Quotes QuoteSource
	// Polls finds the polls the account sent, to name the options a vote
	// chose (nil: votes are dropped).
	Polls PollSource
	// PresenceInterval is the shortest time between two chat states the
	// API sends into one chat (PRESENCE_INTERVAL); DefaultPresenceInterval
	// when zero.
	PresenceInterval time.Duration
	// TypingDelay shows composing before each text (TYPING_DELAY); zero: off.
	TypingDelay bridge.TypingDelay
	// RestrictionBackoff is the first pause after a refusal that names no
	// end (RESTRICTION_BACKOFF); 0: one minute.
	RestrictionBackoff time.Duration
	// StatusUpdates passes contacts' status updates on to Events.Incoming
	// (STATUS_UPDATES); false: they are acknowledged and dropped.
	StatusUpdates bool
	// WAVersion is WA_VERSION: the WhatsApp Web version to announce, "" to
	// announce the one learned from WhatsApp Web (version.go).
	WAVersion string
	// VersionRefresh is how often the current version is learned
	// (DefaultVersionRefresh when zero); OutdatedRetry how often while
	// WhatsApp refuses the client as outdated (DefaultOutdatedRetry).
	VersionRefresh, OutdatedRetry time.Duration
	// Calls hears the calls WhatsApp reports (nil: acknowledged and
	// dropped); RejectCalls is REJECT_CALLS.
	Calls       CallEvents
	RejectCalls bridge.RejectCalls
	// Blocks hears the contacts blocked and unblocked (nil: the block list
	// is kept, unreported).
	Blocks BlockEvents
	// ChannelPosts hears the posts of the channels the account follows
	// (CHANNEL_POSTS); nil: they are acknowledged and dropped.
	ChannelPosts ChannelEvents
	// Labels hears every change of the account's labels (app state); nil:
	// they are not reported.
	Labels LabelEvents
	// ConnectJitter is the longest random wait before the first connect of
	// Run (CONNECT_JITTER); zero: none.
	ConnectJitter time.Duration
}

// Session owns the whatsmeow client of one account.
type Session struct {
	opts     Options
	states   stateStore
	restrict restrictions // WhatsApp's restrictions of sending
	pace     *chatPace    // chat states and read marks of the API
	groups   groupList    // the account's groups, cached briefly
	blocks   blockList    // the account's block list (blocklist.go)
	profiles profileCache // contacts' profiles, cached briefly (profiles.go)
	waLog    waLog.Logger
	log      logr.Logger

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
	// diskLow: DATA_DIR's disk is below its reserve; the link stays down
	// (disk.go).
	diskLow atomic.Bool
	// acks holds each stored message's ack until its commit (acks.go).
	acks *acks
	// signal holds the linked device's decryption writes until the next sync
	// (signalstore.go); nil while unlinked.
	signal atomic.Pointer[batchedSignalStore]
	// version is the WhatsApp Web version the client announces; refused
	// hears WhatsApp refuse it (405), for keepVersionCurrent (version.go).
	version *clientVersion
	refused chan struct{}
	// calls are the calls ringing now (calls.go).
	calls ringing

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
	status  bridge.SessionStatus
	link    *linkAttempt
	linkSeq uint64 // the last link attempt's seq

	// changes are the Subscribe channels; notified under mu, never the
	// other way round.
	changes notify.Changes
}

// New opens the credentials (a wrong ENCRYPTION_KEY stops here, before any
// write) and sets the start-up state: connecting when credentials exist,
// unpaired otherwise, never connected.
func New(ctx context.Context, opts Options) (*Session, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Server != nil {
		trustRootKey(opts.Server.RootKey)
	}
	if opts.RestrictionBackoff == 0 {
		opts.RestrictionBackoff = time.Minute
	}
	opts.VersionRefresh = cmp.Or(opts.VersionRefresh, DefaultVersionRefresh)
	opts.OutdatedRetry = cmp.Or(opts.OutdatedRetry, DefaultOutdatedRetry)
	m := &Session{
		opts: opts, states: stateStore{db: opts.DB, batcher: opts.Batcher, messages: opts.Messages, outbox: opts.Outbox},
		log: opts.Log, bgCtx: context.WithoutCancel(ctx), restrict: restrictions{first: opts.RestrictionBackoff},
		pace: newChatPace(opts.PresenceInterval, opts.Now), acks: newAcks(), refused: make(chan struct{}, 1),
	}
	sessionDB := opts.CredentialsDir + "/session.db"
	m.acks.syncSession = func() error { return m.syncSessionDB(sessionDB) }
	var versionClient *http.Client
	if opts.Server != nil {
		versionClient = opts.Server.HTTPClient
	}
	version, err := newClientVersion(ctx, opts.DB, opts.WAVersion, versionClient, opts.Now)
	if err != nil {
		return nil, err
	}
	m.version = version
	m.waLog = newWALogger(opts.Log)
	creds, err := m.openStartCredentials(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := m.states.load(ctx)
	if err != nil {
		_ = creds.close()
		return nil, err
	}
	m.status = initialStatus(stored, creds.linked())
	if stored.RestrictedUntil.After(opts.Now()) {
		// WhatsApp's restriction outlives the restart; the queue holds
		// until it ends instead of spending a refused send to learn it.
		m.status.RestrictedUntil = stored.RestrictedUntil
		m.endRestrictionAt(stored.RestrictedUntil)
	}
	// A restart that changes nothing (an unlinked bridge) writes nothing: a
	// commit on a fresh write-ahead log costs three disk syncs, most of a
	// restart's time before its first answer.
	if !m.status.Equal(stored) {
		changed := m.status.State != stored.State || m.status.Reason != stored.Reason
		if err := m.states.save(ctx, m.status, opts.Now(), changed); err != nil {
			_ = creds.close()
			return nil, err
		}
	}
	m.creds = creds
	m.linked.Store(creds.linked())
	m.client.Store(m.newClient(creds))
	return m, nil
}

// openStartCredentials opens session.db for New, or takes the handle
// start-up opened already.
func (m *Session) openStartCredentials(ctx context.Context) (*credentials, error) {
	path := m.opts.CredentialsDir + "/session.db"
	if m.opts.CredentialsDB != nil {
		return credentialsOn(ctx, m.opts.CredentialsDB, path, m.waLog.Sub("store"))
	}
	return openCredentials(ctx, path, m.opts.MasterKey, m.waLog.Sub("store"))
}

// syncSessionDB writes the decryptions held in memory, then makes every
// commit of session.db so far durable.
func (m *Session) syncSessionDB(path string) error {
	if s := m.signal.Load(); s != nil {
		if err := s.Flush(m.bgCtx); err != nil {
			return fmt.Errorf("write decryptions to session.db: %w", err)
		}
	}
	return sqlite.SyncWAL(path)
}

func (m *Session) newClient(creds *credentials) *whatsmeow.Client {
	m.signal.Store(nil)
	batchSignalWrites(creds.device, m.signal.Store)
	cli := whatsmeow.NewClient(creds.device, m.waLog.Sub("client"))
	cli.EnableAutoReconnect = true
	// Acks only after the event handlers return, and none when one fails: an
	// incoming message is in the webhook outbox on disk before WhatsApp may
	// drop its copy. The decrypted-event buffer keeps a refused message's
	// plaintext, since the Signal session has already moved past it, so that
	// the redelivery is handled like the first delivery.
	cli.SynchronousAck = true
	// The labels a first (full) sync of app state reads are reported like
	// later changes: they are what the LabelBook starts from.
	cli.EmitAppStateEventsOnFullSync = true
	cli.EnableDecryptedEventBuffer = true
	// A burst larger than whatsmeow's handler queue waits in the socket (and
	// so at WhatsApp) instead of in a goroutine per message: the handler sees
	// messages in the order WhatsApp sent them, and memory stays bounded at
	// any incoming rate (our patch, third_party/PATCH.md).
	cli.HandlerQueueBackpressure = true
	// The handler hands each message to the store and returns; its ack waits
	// for the commit, while the next messages are decrypted and stored along.
	cli.DeferMessageAck = m.acks.deferAck(creds.device)
	// A message over this is recorded by its size, not decrypted (patch
	// 0004; toolarge.go).
	cli.MaxIncomingCiphertext = MaxIncomingCiphertext
	// A first connect that fails for a network reason retries in the
	// background, like any later reconnect.
	cli.InitialAutoReconnect = true
	cli.AutoReconnectHook = func(error) bool {
		// Runs on whatsmeow's reconnect goroutine, the only one that grows the
		// counter, just before it computes the next delay.
		cli.AutoReconnectErrors = min(cli.AutoReconnectErrors, maxReconnectSteps)
		return true
	}
	if m.opts.Server != nil {
		m.opts.Server.use(cli)
	}
	// The version WhatsApp accepts today, not the one whatsmeow was built
	// with (version.go).
	cli.GetClientPayload = func() *waWa6.ClientPayload { return m.version.payload(cli.Store) }
	cli.AddEventHandlerWithSuccessStatus(func(ev any) bool { return m.handleEvent(cli, ev) })
	return cli
}

// Run connects when credentials exist and records heartbeats until ctx ends;
// then it disconnects and closes the credentials.
func (m *Session) Run(ctx context.Context) error {
	go m.acks.run(ctx, func(id types.MessageID, err error) {
		m.log.Error(err, "store incoming message; WhatsApp will deliver it again", "whatsapp_id", id)
	}, func(err error) {
		m.log.Error(err, "clear decrypted messages in session.db")
	})
	go m.keepVersionCurrent(ctx)
	if !m.waitJitter(ctx) {
		return m.creds.close()
	}
	m.opMu.Lock()
	if m.linked.Load() && !m.diskLow.Load() {
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
			<-m.acks.stopped // no ack runs on closed credentials
			return m.creds.close()
		case <-ticker.C:
			m.beat()
		}
	}
}

// waitJitter waits a random time up to ConnectJitter before a linked
// session's first connect: bridges restarted together (a node's fleet)
// reach WhatsApp spread out, not in one burst from one address. The state
// says connecting meanwhile. False when ctx ended first.
func (m *Session) waitJitter(ctx context.Context) bool {
	if m.opts.ConnectJitter <= 0 || !m.linked.Load() {
		return true
	}
	wait := rand.N(m.opts.ConnectJitter) //nolint:gosec // a spread of connects needs no unpredictability
	m.log.V(1).Info("waiting before the first connect (CONNECT_JITTER)", "wait", wait.String())
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		<-m.acks.stopped
		return false
	}
}

// connect opens the socket with stored credentials; opMu is held.
func (m *Session) connect() {
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
func (m *Session) beat() {
	if m.client.Load().IsLoggedIn() {
		m.apply(heartbeat{})
	}
}

// Status is the session's current status.
func (m *Session) Status() bridge.SessionStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// apply runs ev through the state policy and stores the result when it
// changed.
func (m *Session) apply(ev event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applyLocked(ev)
}

func (m *Session) applyLocked(ev event) {
	now := m.opts.Now()
	next, changed := transition(m.status, ev, now)
	if !changed {
		return
	}
	prev := m.status
	m.status = next
	m.notify()
	reported := prev.State != next.State || prev.Reason != next.Reason || !prev.RestrictedUntil.Equal(next.RestrictedUntil)
	if err := m.states.save(m.bgCtx, next, now, reported); err != nil {
		// The in-memory state stays right; the next change rewrites the row.
		m.log.Error(err, "persist session state")
	}
	if reported {
		m.log.Info("session state", "state", next.State, "reason", next.Reason, "previous", prev.State,
			"restricted_until", next.RestrictedUntil)
	}
}

// reset replaces a logged-out client by a fresh, unlinked one.
func (m *Session) reset(old *whatsmeow.Client) {
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
func (m *Session) replaceClientLocked() error {
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
func (m *Session) Logout(ctx context.Context) error {
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
	m.groups.keep(nil, time.Time{}) // another account may link next
	if err := m.replaceClientLocked(); err != nil {
		return err
	}
	m.apply(wiped{reason: contract.ReasonUserLogout})
	return nil
}

// Groups lists the account's joined groups.
func (m *Session) Groups(ctx context.Context) ([]bridge.Group, error) {
	cli := m.client.Load()
	if !cli.IsLoggedIn() {
		return nil, bridge.ErrNotLinked
	}
	if gs, ok := m.groups.fresh(m.opts.Now()); ok {
		return gs, nil
	}
	v, err, _ := m.groups.flight.Do("groups", func() (any, error) {
		infos, err := cli.GetJoinedGroups(ctx)
		if err != nil {
			return nil, fmt.Errorf("list groups: %w", err)
		}
		groups := make([]bridge.Group, 0, len(infos))
		for _, g := range infos {
			// ParticipantCount may be 0 in the listing; the list itself is right.
			groups = append(groups, bridge.Group{ID: g.JID.String(), Subject: g.Name, Participants: len(g.Participants)})
		}
		m.groups.keep(groups, m.opts.Now())
		return groups, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]bridge.Group), nil //nolint:forcetypeassert // the flight returns only this type
}

// groupsCacheFor is how long the list of the account's groups is served
// from memory: a dashboard or a client polling it must not make the
// account query WhatsApp every time.
const groupsCacheFor = 30 * time.Second

// groupList is the cached list of the account's groups, and the groups
// GroupInfo read one by one, by JID.
type groupList struct {
	flight singleflight.Group
	mu     sync.Mutex
	groups []bridge.Group
	at     time.Time
	infos  map[string]groupInfoAt
}

// groupInfoAt is a group as GroupInfo read it, and when.
type groupInfoAt struct {
	info bridge.GroupInfo
	at   time.Time
}

func (g *groupList) fresh(now time.Time) ([]bridge.Group, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups == nil || now.Sub(g.at) >= groupsCacheFor {
		return nil, false
	}
	return g.groups, true
}

func (g *groupList) keep(groups []bridge.Group, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups, g.at = groups, now
	if groups == nil {
		g.infos = nil
	}
}

func (g *groupList) freshInfo(jid string, now time.Time) (bridge.GroupInfo, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.infos[jid]
	if !ok || now.Sub(c.at) >= groupsCacheFor {
		return bridge.GroupInfo{}, false
	}
	return c.info, true
}

func (g *groupList) keepInfo(jid string, info bridge.GroupInfo, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.infos == nil {
		g.infos = map[string]groupInfoAt{}
	}
	for k, c := range g.infos { // the stale ones, so that the map stays as small as what is read
		if now.Sub(c.at) >= groupsCacheFor {
			delete(g.infos, k)
		}
	}
	g.infos[jid] = groupInfoAt{info: info, at: now}
}

func (g *groupList) forgetInfo(jid string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.infos, jid)
}
