package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"

	"github.com/msgbridge/msgbridge/bridge/apikeys"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/datadir"
	"github.com/msgbridge/msgbridge/bridge/diskguard"
	"github.com/msgbridge/msgbridge/bridge/groupadmin"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/dashboard"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/httpapi/public"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/incoming"
	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/media"
	"github.com/msgbridge/msgbridge/bridge/metrics"
	"github.com/msgbridge/msgbridge/bridge/notify"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/settings"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
	"github.com/msgbridge/msgbridge/contract"
)

// app is the bridge's parts. build makes them in dependency order, each
// from parts already made; the two flows that go back up the chain
// (receipts and state changes) are the ports in events.go.
type app struct {
	settings *settings.Settings
	listener net.Listener
	dir      *datadir.Dir
	log      logr.Logger
	logFiles *logging.Files
	key      []byte
	// userIDs are the Cloud door's contact user ids, keyed from key.
	userIDs *cloudapi.UserIDs
	// sessionDB is session.db as the key check opened it, for the session.
	sessionDB *sql.DB
	db        *sql.DB
	writer    *sqlite.Batcher
	audit     *audit.Trail
	metrics   *metrics.Metrics
	// traffic tells the dashboard's event streams that messages changed.
	traffic  *notify.Changes
	webhooks *webhook.Outbox
	inbox    *inbox.Inbox
	media    *media.Store
	messages *sendqueue.MessageLog
	session  *whatsapp.Session
	contacts *whatsapp.ContactBook
	labels   *whatsapp.LabelBook
	queue    *sendqueue.Queue
	// downloads fetches incoming attachments into DATA_DIR/media.
	downloads *media.Downloader
	uploads   *spool.Uploads
	// disk watches DATA_DIR's free space (DISK_RESERVE).
	disk *diskguard.Guard
	// server serves from the moment the bridge listens: starting answers
	// /health and holds the other requests until the last step hands it
	// the router; served is Serve's result.
	server   *http.Server
	started  time.Time
	starting *httpapi.Starting
	served   chan error

	// closers undo build's steps, last first.
	closers []func()
}

// buildStep is one step of build; it may add to a.closers.
type buildStep func(ctx context.Context, a *app) error

// build makes every part of the bridge. The listener comes first: a busy or
// unusable LISTEN_ADDR is refused before anything on disk is touched, and the
// server answers /health while the later steps open the databases. On an
// error, what was made is closed again.
func build(ctx context.Context, s *settings.Settings, stdout io.Writer) (*app, error) {
	a := &app{settings: s, key: []byte(s.EncryptionKey.Reveal())}
	steps := []buildStep{
		listen, lockDataDir(stdout), verifyKey, openStores,
		newObservers, newMessaging, newHTTPServer,
	}
	for _, step := range steps {
		if err := step(ctx, a); err != nil {
			a.close()
			return nil, err
		}
	}
	return a, nil
}

// close undoes build, last step first.
func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

func (a *app) onClose(f func()) { a.closers = append(a.closers, f) }

// errListen marks a LISTEN_ADDR that cannot be served: a setting's fault,
// so main exits as for a bad setting.
var errListen = errors.New("cannot listen")

// listen takes LISTEN_ADDR and starts serving it at once: the first answer
// (a probe's /health) waits for nothing on disk, and a request that needs
// the stores waits in starting until newHTTPServer hands over the router.
func listen(ctx context.Context, a *app) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", a.settings.ListenAddr)
	if err != nil {
		return fmt.Errorf("%w: setting %s=%q: %w", errListen, contract.EnvListenAddr, a.settings.ListenAddr, err)
	}
	// net/http's own 400, 431 and 501 answers in the error shape too.
	a.listener = httpapi.JSONErrorListener(ln)
	a.started = time.Now()
	a.starting = httpapi.NewStarting(a.started)
	a.server = &http.Server{
		Handler: a.starting,
		// Bodies are bounded by httpapi's limits (time between reads, a
		// whole-body deadline, concurrent uploads); headers here.
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
	}
	a.served = make(chan error, 1)
	go func() { a.served <- a.server.Serve(a.listener) }()
	a.onClose(func() {
		a.starting.Failed() // a start that got no further answers 503
		_ = a.server.Close()
	})
	return nil
}

// lockDataDir takes DATA_DIR's lock, then adds the daily log files: a
// refused second process must not write into the first one's files.
func lockDataDir(stdout io.Writer) buildStep {
	return func(_ context.Context, a *app) error {
		dir, err := datadir.Open(a.settings.DataDir)
		if err != nil {
			return err
		}
		a.dir = dir
		a.onClose(func() { _ = dir.Close() })
		log, files, err := logging.New(logging.Options{Stdout: stdout, Dir: dir.LogsDir(), Level: a.settings.LogLevel,
			MaxBytes: a.settings.LogFilesMaxBytes})
		if err != nil {
			return err
		}
		a.log, a.logFiles = log, files
		a.onClose(func() { _ = files.Close() })
		return nil
	}
}

// verifyKey checks that every existing database decrypts with the key
// before any is created or changed: a wrong key wipes nothing. The checks
// are independent and each opens SQLite, so they run side by side, on all
// cores but one: the server answers from that one while the checks run
// (on two cores, running all three at once left a probe's request waiting
// for a core up to 6 ms; see the README's start-up figures). An
// existing bridge.db and session.db stay open for the stores and the
// session rather than being opened twice.
func verifyKey(ctx context.Context, a *app) error {
	var checks errgroup.Group
	checks.SetLimit(max(1, runtime.GOMAXPROCS(0)-1))
	var bridgeDB, sessionDB *sql.DB
	checks.Go(func() (err error) {
		bridgeDB, err = sqlite.OpenExistingBridgeDB(ctx, a.dir.BridgeDB(), a.key)
		return err
	})
	checks.Go(func() (err error) {
		sessionDB, err = whatsapp.OpenExistingCredentials(ctx, a.dir.SessionDB(), a.key)
		return err
	})
	checks.Go(func() error { return audit.Verify(ctx, a.dir.AuditDir(), a.key) })
	err := checks.Wait()
	for _, db := range []*sql.DB{bridgeDB, sessionDB} {
		if db != nil {
			a.onClose(func() { _ = db.Close() }) // closing twice is harmless
		}
	}
	a.db, a.sessionDB = bridgeDB, sessionDB
	if err != nil {
		return fmt.Errorf("%s: %w", contract.EnvEncryptionKey, err)
	}
	return nil
}

// openStores opens (or creates) and migrates bridge.db, its group-commit
// writer, and the audit log.
func openStores(ctx context.Context, a *app) error {
	if a.db == nil {
		db, err := sqlite.OpenBridgeDB(ctx, a.dir.BridgeDB(), a.key)
		if err != nil {
			return err
		}
		a.db = db
		a.onClose(func() { _ = db.Close() })
	} else if err := sqlite.MigrateBridgeDB(ctx, a.db); err != nil {
		return err
	}
	// Every commit tells the dashboard's live pages to look again (an
	// incoming message is committed after its handler returned).
	a.traffic = &notify.Changes{}
	a.writer = sqlite.NewBatcher(a.db, sqlite.AfterCommit(a.traffic.Notify))
	a.onClose(a.writer.Close)
	auditLog, err := audit.Open(a.dir.AuditDir(), a.key, time.Now)
	if err != nil {
		return err
	}
	a.audit = auditLog
	a.onClose(func() { _ = auditLog.Close() })
	return nil
}

// newObservers makes what the other parts report into: the metrics'
// counters, the webhook outbox (which stores nothing when WEBHOOK_URL is
// empty), the incoming history (which enqueues into the outbox) and the
// incoming attachments' records.
func newObservers(ctx context.Context, a *app) error {
	a.media = media.NewStore(a.db, a.writer, a.settings.MediaRetention, time.Now)
	a.metrics = metrics.New()
	// Subscriptions in the cloud format get the Cloud API's webhooks. The
	// format is registered before the outbox reads the subscriptions:
	// one whose format is unknown then is not started, and a cloud
	// subscription made through the admin API stayed idle after every
	// restart until the next change of a subscription.
	var err error
	identities := inbox.NewIdentityBook()
	if err = identities.Load(ctx, a.db); err != nil {
		return err
	}
	if a.userIDs, err = cloudapi.NewUserIDs(a.key); err != nil {
		return fmt.Errorf("cloud user ids: %w", err)
	}
	a.userIDs.Knowing(identities)
	webhook.RegisterFormat(cloudapi.FormatName, cloudapi.WebhookFormat{Account: a.account, UserIDs: a.userIDs})
	a.webhooks = webhook.New(webhook.Options{
		DB: a.db, Batcher: a.writer, URL: a.settings.WebhookURL, Key: []byte(a.settings.WebhookSecret.Reveal()),
		Log: a.log.WithName("webhook"), Observer: trafficObserver{a.metrics, a.traffic},
		// NATS subjects name the linked account.
		Account:       a.account,
		LocalTargets:  a.settings.WebhookLocalTargets,
		KeepDelivered: a.settings.DeliveredRetention, KeepEvents: a.settings.EventLogRetention,
	})
	a.inbox = inbox.New(inbox.Options{
		DB: a.db, Batcher: a.writer, Webhooks: a.webhooks, Retention: a.settings.InboxRetention,
		Log: a.log.WithName("inbox"), Identities: identities,
	})
	return nil
}

// account is the linked number, "" while unlinked; the session is made
// after the outbox, before anything is delivered.
func (a *app) account() string {
	if a.session == nil {
		return ""
	}
	return a.session.Status().Account
}

// newMessaging makes the message log, the WhatsApp session that reports
// receipts into it, and the queue that sends through the session; then the
// metrics' gauges, which read all three.
func newMessaging(ctx context.Context, a *app) error {
	a.messages = sendqueue.NewMessageLog(sendqueue.MessageLogOptions{
		DB: a.db, Batcher: a.writer, Outbox: a.webhooks, Observer: trafficObserver{a.metrics, a.traffic},
		Log: a.log.WithName("sendqueue"),
	})
	server, err := simulatorServer(os.LookupEnv)
	if err != nil {
		return err
	}
	whatsapp.TuneKeepAlive(a.settings.HeartbeatInterval)
	a.session, err = whatsapp.New(ctx, whatsapp.Options{
		CredentialsDir: a.dir.CredentialsDir(), CredentialsDB: a.sessionDB, SpoolDir: a.dir.SpoolDir(), MasterKey: a.key,
		DB: a.db, Batcher: a.writer, HeartbeatInterval: a.settings.HeartbeatInterval,
		Log: a.log.WithName("whatsapp"), Server: server,
		Events: sessionEvents{
			Receiver: incoming.Receiver{Writer: a.writer, Media: a.media, History: a.inbox}, metrics: a.metrics,
		},
		Messages:    a.messages,
		Outbox:      a.webhooks,
		Quotes:      quotes{a.messages, a.inbox},
		Polls:       a.messages,
		TypingDelay: a.settings.TypingDelay, RestrictionBackoff: a.settings.RestrictionBackoff,
		PresenceInterval: a.settings.PresenceInterval, StatusUpdates: a.settings.StatusUpdates,
		WAVersion: a.settings.WAVersion, RejectCalls: a.settings.RejectCalls, ConnectJitter: a.settings.ConnectJitter,
		Calls: callEvents{webhooks: a.webhooks, writer: a.writer, app: a, reply: a.settings.RejectCallsReply,
			log: a.log.WithName("calls")},
		Blocks:       blockEvents{webhooks: a.webhooks, writer: a.writer},
		ChannelPosts: channelEvents(a.settings.ChannelPosts, a.webhooks, a.writer),
		Labels:       labelEvents{app: a, webhooks: a.webhooks, writer: a.writer},
	})
	if err != nil {
		return err
	}
	a.labels = whatsapp.NewLabelBook(a.session, a.db)
	mediaKey, err := media.DeriveKey(a.key)
	if err != nil {
		return err
	}
	a.downloads = media.NewDownloader(media.DownloaderOptions{Store: a.media, Dir: a.dir.MediaDir(), Key: mediaKey,
		Source: mediaSource{a.session}, Log: a.log.WithName("media")})
	if err := guardDisk(a); err != nil {
		return err
	}
	a.contacts = whatsapp.NewContactBook(a.session, a.db, a.writer, a.settings.CheckRate, a.settings.CheckBurst)
	a.queue = sendqueue.New(sendqueue.Options{
		Log: a.messages, Sender: a.session, Schedule: a.settings.RetrySchedule, Rate: a.settings.SendRate,
		Checker: a.contacts.QueueChecks(), Accounts: a.session, Space: a.disk, StatusAudience: a.settings.StatusAudienceRate,
		Blocks: a.session,
	})
	a.uploads = spool.NewUploads(spool.UploadOptions{DB: a.db, Batcher: a.writer, Dir: a.dir.SpoolDir(), Retention: a.settings.UploadRetention,
		Log: a.log.WithName("uploads")})
	if err := a.queue.SweepSpool(ctx, a.dir.SpoolDir()); err != nil {
		return fmt.Errorf("sweep spool: %w", err)
	}
	if err := a.downloads.CleanUp(ctx); err != nil {
		return fmt.Errorf("clean up %s: %w", a.dir.MediaDir(), err)
	}
	sources := gauges(ctx, a.messages, a.webhooks, a.session)
	sources.DiskFree = func() float64 { return float64(a.disk.Free()) }
	a.metrics.Watch(sources)
	return nil
}

// guardDisk makes the disk guard, which stops the session's link while
// DATA_DIR's disk is below DISK_RESERVE; a disk already low keeps the link
// from starting at all.
func guardDisk(a *app) error {
	guard, err := diskguard.New(diskguard.Options{
		Dir: a.dir.Root(), Reserve: uint64(a.settings.DiskReserve), //nolint:gosec // a validated positive size
		Log: a.log.WithName("disk"), OnChange: func(low bool, _ diskguard.Space) { a.session.SetDiskLow(low) },
	})
	if err != nil {
		return err
	}
	a.disk = guard
	a.session.SetDiskLow(guard.Low())
	return nil
}

// serverLimits are httpapi's default body limits with the bounds on callers
// not yet verified that the settings give.
func serverLimits(s *settings.Settings) guard.Limits {
	l := httpapi.DefaultServerLimits(s.MaxFileSize)
	l.MaxUploads, l.UploadsPerAddress, l.KeyDeadline = s.MaxUploads, s.UploadsPerAddress, s.KeyDeadline
	return l
}

// cloudDoor builds the Cloud API door on the use cases the bridge's own
// API calls, with the API's one check of a credential; space is the
// spool's bound both doors write into.
func cloudDoor(a *app, space *spool.Space, budget sendqueue.Budget) func(httpapi.KeyCheck) http.Handler {
	return func(checkKey httpapi.KeyCheck) http.Handler {
		log := a.log.WithName("cloudapi")
		return cloudapi.New(cloudapi.Config{
			CheckKey:    checkKey,
			Sending:     sendqueue.Sending{Queue: a.queue, Log: log, Budget: budget},
			Targets:     a.queue,
			Chats:       a.session,
			Space:       space,
			MaxFileSize: a.settings.MaxFileSize,
			Account:     func() string { return a.session.Status().Account },
			History:     a.inbox,
			Media:       a.downloads,
			Uploads:     a.uploads,
			Templates:   &cloudapi.Templates{DB: a.db, Batcher: a.writer},
			Links:       cloudapi.LinkFetcher{Hosts: a.settings.CloudMediaHosts},
			UserIDs:     a.userIDs,
			Log:         log,
		})
	}
}

func newHTTPServer(ctx context.Context, a *app) error {
	s := a.settings
	keys, err := apikeys.Open(ctx, a.db, s.APIKey, time.Now)
	if err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	recorder := httpapi.AuditRecorder{Trail: a.audit, Logger: a.log.WithName("audit")}
	// One limit on failed credentials per address for the API and the
	// dashboard's sign-in together.
	creds := guard.NewCredentials(recorder, time.Now)
	spoolMax, err := spoolMaxFor(s.SpoolMaxBytes, a.dir.SpoolDir())
	if err != nil {
		return err
	}
	a.log.Info("spool bounded", "dir", a.dir.SpoolDir(), "maxBytes", spoolMax)
	space := spool.NewSpace(a.dir.SpoolDir(), spoolMax) // one bound for every door's writes
	deps := httpapi.Deps{
		Public: public.Deps{Started: a.started, Link: a.session, Pacing: a.queue, Metrics: a.metrics.Handler(), Pprof: s.Pprof},
		Messaging: messaging.Deps{
			Messages: a.queue,
			Send: messaging.SendConfig{SpoolDir: a.dir.SpoolDir(), MaxFileSize: s.MaxFileSize, SpoolMaxBytes: spoolMax,
				Space: space},
			Uploads:  a.uploads,
			Targets:  a.queue,
			Polls:    polls{a.messages, a.inbox},
			Chats:    readMarks{a.session, a.history()},
			Contacts: a.contacts,
			Channels: a.session,
			Labels:   a.labels,
			Groups: messaging.Groups{Admin: a.session, Actions: groupadmin.New(sendqueue.NewAnswers(a.db, a.writer, time.Now),
				s.GroupActionRate, time.Now, a.log.WithName("groupadmin"))},
			Events: messaging.Events{Log: a.webhooks, Streams: s.EventStreams, StreamsPerAddress: s.EventStreamsPerAddress},
			Inbox:  a.inbox,
			Media:  a.downloads,
		},
		Admin: admin.Deps{Session: a.session, Pacing: a.queue, Analytics: sendqueue.Analytics{DB: a.db},
			LogFiles: a.logFiles, Webhooks: a.webhooks, Subscriptions: a.webhooks, Inbox: a.inbox, Keys: keys, Approvals: a.queue},
		Credentials:    httpapi.Credentials{APIKey: s.APIKey, AdminToken: s.AdminToken, Guard: creds, Keys: keys},
		Audit:          recorder,
		Limits:         serverLimits(s),
		TrustedProxies: s.TrustedProxies,
		Log:            a.log.WithName("httpapi"),
		CloudAPI:       cloudDoor(a, space, keys),
		CloudAPIPaths:  cloudapi.PathPrefix,
		MCP:            mcpDoor(a, spoolMax),
	}
	dataDeps := dashboard.DataDeps{Admin: deps.Admin, Messaging: deps.Messaging, Audit: recorder, Log: deps.Log}
	dash := dashboard.New(dashboard.Options{
		Session: a.session, AdminToken: s.AdminToken, TOTPKey: []byte(s.TOTPSecret.Reveal()),
		Audit: recorder, Guard: creds, Log: a.log.WithName("dashboard"),
		API: httpapi.Lazy(func() http.Handler { return dashboard.DataAPI(dataDeps) }), Traffic: a.traffic,
	})
	deps.Dashboard = dash
	// Shutdown waits for handlers without cancelling them; the dashboard's
	// event streams would hold it for the whole grace period.
	a.server.RegisterOnShutdown(dash.Close)
	a.starting.Ready(httpapi.NewRouter(deps))
	return nil
}

// spoolMaxFor is the spool's bound: SPOOL_MAX_BYTES when set, which must
// fit the spool's volume (a bound the disk cannot hold bounds nothing, and
// the disk fills before any 507), else the default.
func spoolMaxFor(set int64, dir string) (int64, error) {
	if set == 0 {
		return defaultSpoolMax(dir), nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err == nil {
		if size := int64(st.Blocks) * st.Bsize; set > size { //nolint:gosec // block counts fit an int64
			return 0, fmt.Errorf("setting SPOOL_MAX_BYTES: %d bytes is larger than the volume of DATA_DIR (%d bytes)", set, size)
		}
	}
	return set, nil
}

// defaultSpoolMax is SPOOL_MAX_BYTES's default: a quarter of the free space
// of the spool's volume at start-up, so that attachments can never take the
// space the databases and the session need. Unknown free space: no bound
// but the disk's.
func defaultSpoolMax(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * st.Bsize / 4 //nolint:gosec // block counts fit an int64
}
