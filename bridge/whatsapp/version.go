package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/store"

	"github.com/msgbridge/msgbridge/contract"
)

// WhatsApp refuses clients it considers outdated (405 "client outdated") and
// has refused versions only weeks old, so the version the client announces
// is learned at run time rather than fixed at build time:
//
//   - WA_VERSION, when set, is announced as it is (a person's override);
//   - else the version last learned from WhatsApp Web (kept in bridge.db, so
//     a restart announces it at once);
//   - else the version the pinned whatsmeow was built with.
//
// The bridge learns the current version from WhatsApp Web (whatsmeow's
// GetLatestVersion) at start and every VersionRefresh, in the background: a
// connect never waits for it. A 405 makes it learn once more and reconnect
// when that gave another version; when it gave none, the session stays
// client_outdated and retries only when the version changes.

const (
	// DefaultVersionRefresh is how often the current version is learned.
	DefaultVersionRefresh = 24 * time.Hour
	// DefaultOutdatedRetry is how often an outdated session asks WhatsApp
	// Web for a newer version: sooner than daily, since the bridge is down,
	// but rare enough to be a person's pace.
	DefaultOutdatedRetry = time.Hour
	// versionFetchTimeout bounds one request to WhatsApp Web.
	versionFetchTimeout = 30 * time.Second
)

// clientVersion is the version the client announces, and how it is learned.
type clientVersion struct {
	pinned store.WAVersionContainer // WA_VERSION; zero when unset
	db     *sql.DB
	fetch  func(ctx context.Context) (store.WAVersionContainer, error)
	now    func() time.Time

	mu      sync.Mutex
	current store.WAVersionContainer // learned, else the build's
	sent    store.WAVersionContainer // the version the last handshake announced
	refused store.WAVersionContainer // the version WhatsApp last refused
}

// newClientVersion reads WA_VERSION (already validated by the settings) and
// the version learned before the restart.
func newClientVersion(ctx context.Context, db *sql.DB, pinned string, httpClient *http.Client, now func() time.Time) (*clientVersion, error) {
	v := &clientVersion{db: db, now: now, current: store.GetWAVersion()}
	if pinned != "" {
		parts, err := contract.ParseWAVersion(pinned)
		if err != nil {
			return nil, fmt.Errorf("setting %s: %w", contract.EnvWAVersion, err)
		}
		v.pinned = parts
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: versionFetchTimeout}
	}
	v.fetch = func(ctx context.Context) (store.WAVersionContainer, error) {
		latest, err := whatsmeow.GetLatestVersion(ctx, httpClient)
		if err != nil {
			return store.WAVersionContainer{}, err
		}
		return *latest, nil
	}
	learned, err := v.load(ctx)
	if err != nil {
		return nil, err
	}
	if !learned.IsZero() {
		v.current = learned
	}
	return v, nil
}

// announced is the version the next login announces.
func (v *clientVersion) announced() store.WAVersionContainer {
	if !v.pinned.IsZero() {
		return v.pinned
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.current
}

// payload is the client payload of dev with the announced version, for
// whatsmeow's Client.GetClientPayload. It is per client, unlike whatsmeow's
// process-wide SetWAVersion, which would race with a client connecting.
func (v *clientVersion) payload(dev *store.Device) *waWa6.ClientPayload {
	p := dev.GetClientPayload()
	version := v.announced()
	v.mu.Lock()
	v.sent = version
	v.mu.Unlock()
	p.UserAgent.AppVersion = version.ProtoAppVersion()
	if p.DevicePairingData != nil {
		hash := version.Hash()
		p.DevicePairingData.BuildHash = hash[:]
	}
	return p
}

// wasRefused records that WhatsApp refused the version the last handshake
// announced: not the announced one now, which a learning that ended
// meanwhile may have changed already.
func (v *clientVersion) wasRefused() {
	v.mu.Lock()
	v.refused = v.sent
	v.mu.Unlock()
}

// retryable reports whether the announced version is not the one WhatsApp
// refused last: a reconnect may then succeed.
func (v *clientVersion) retryable() bool {
	version := v.announced()
	v.mu.Lock()
	defer v.mu.Unlock()
	return version != v.refused
}

// learn asks WhatsApp Web for the current version and keeps a new one, in
// memory and in bridge.db. It reports whether the announced version changed.
func (v *clientVersion) learn(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, versionFetchTimeout)
	defer cancel()
	latest, err := v.fetch(ctx)
	if err != nil {
		return false, fmt.Errorf("learn the WhatsApp Web version: %w", err)
	}
	if latest.IsZero() {
		return false, errors.New("learn the WhatsApp Web version: WhatsApp Web named none")
	}
	v.mu.Lock()
	changed := latest != v.current
	v.current = latest
	v.mu.Unlock()
	if !changed {
		return false, nil
	}
	if err := v.save(ctx, latest); err != nil {
		return v.pinned.IsZero(), err
	}
	return v.pinned.IsZero(), nil
}

func (v *clientVersion) load(ctx context.Context) (store.WAVersionContainer, error) {
	var text string
	err := v.db.QueryRowContext(ctx, `SELECT version FROM wa_version WHERE id = 1`).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return store.WAVersionContainer{}, nil
	} else if err != nil {
		return store.WAVersionContainer{}, fmt.Errorf("read the learned WhatsApp Web version: %w", err)
	}
	parts, err := contract.ParseWAVersion(text)
	if err != nil {
		return store.WAVersionContainer{}, nil //nolint:nilerr // a row that no longer parses is forgotten, not fatal
	}
	return parts, nil
}

func (v *clientVersion) save(ctx context.Context, version store.WAVersionContainer) error {
	_, err := v.db.ExecContext(ctx, `INSERT INTO wa_version (id, version, learned_at) VALUES (1, ?, ?)
		ON CONFLICT (id) DO UPDATE SET version = excluded.version, learned_at = excluded.learned_at`,
		version.String(), v.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("keep the learned WhatsApp Web version: %w", err)
	}
	return nil
}

// versionRefused tells keepVersionCurrent that WhatsApp refused the client
// as outdated; it never blocks whatsmeow's event goroutine.
func (m *Session) versionRefused() {
	m.version.wasRefused()
	select {
	case m.refused <- struct{}{}:
	default: // one is pending already
	}
}

// keepVersionCurrent learns the current WhatsApp Web version at start, every
// VersionRefresh, and once after each refusal, and reconnects a session that
// was refused as outdated once the version it would announce changed.
func (m *Session) keepVersionCurrent(ctx context.Context) {
	m.learnVersion(ctx)
	timer := time.NewTimer(m.versionInterval())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.refused:
			m.learnVersion(ctx)
		case <-timer.C:
			m.learnVersion(ctx)
		}
		m.reconnectIfOutdated()
		timer.Reset(m.versionInterval())
	}
}

// versionInterval is the wait before the next learning: shorter while the
// session is refused as outdated.
func (m *Session) versionInterval() time.Duration {
	if m.outdated() {
		return m.opts.OutdatedRetry
	}
	return m.opts.VersionRefresh
}

func (m *Session) outdated() bool {
	return m.Status().Reason == contract.ReasonClientOutdated
}

func (m *Session) learnVersion(ctx context.Context) {
	changed, err := m.version.learn(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		m.log.Info("WhatsApp Web version not learned; announcing the last known", "level", "warn",
			"version", m.version.announced().String(), "error", err.Error())
	case changed:
		m.log.Info("WhatsApp Web version learned", "version", m.version.announced().String())
	}
}

// reconnectIfOutdated connects again a session WhatsApp refused as
// outdated, when the version it announces is not the refused one.
func (m *Session) reconnectIfOutdated() {
	if !m.outdated() || !m.version.retryable() {
		return
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if m.outdated() && m.linked.Load() && !m.diskLow.Load() {
		m.log.Info("reconnecting with the new WhatsApp Web version", "version", m.version.announced().String())
		// The refused socket may not be closed yet: a new version is often
		// learned before the server's close arrives.
		m.client.Load().Disconnect()
		m.connect()
	}
}
