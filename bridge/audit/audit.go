// Package audit keeps the record of every admin and session action:
// pairing, logout, purges, deletions, dashboard sign-ins,
// each with its time, outcome and client address.
//
// Records live in weekly encrypted SQLite databases, DATA_DIR/audit/YYYY-Www.db
// (ISO 8601 weeks), so that old weeks can be archived or removed as whole
// files. Only the current week's database stays open; other weeks are opened
// for one call and closed, so the number of open handles stays at one
// however many weeks exist.
package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// purpose separates the audit databases' encryption key from the others'.
const purpose = "audit"

// Action names what was done. Values are stable strings: they are stored
// and returned by the API.
type Action string

// The actions the bridge records.
const (
	ActionPairingQR        Action = "session.pairing_qr"
	ActionPairingCode      Action = "session.pairing_code"
	ActionLogout           Action = "session.logout"
	ActionDashboardSignIn  Action = "dashboard.sign_in"
	ActionLogPurge         Action = "logs.purge"
	ActionAuditDelete      Action = "audit.delete"
	ActionWebhookRedeliver Action = "webhooks.redeliver"
	ActionWebhookReplay    Action = "webhooks.replay"
	// A refused API key or admin token on the API (throttled records).
	ActionAPIKey     Action = "api.api_key"
	ActionAdminToken Action = "api.admin_token"
	// A one-time code sent to the account's own chat by the dashboard.
	ActionChatCode Action = "dashboard.chat_code"
	// Group administration through the API (detail: the group and what).
	ActionGroupCreate  Action = "group.create"
	ActionGroupUpdate  Action = "group.update"
	ActionGroupPhoto   Action = "group.photo"
	ActionGroupMembers Action = "group.members"
	ActionGroupInvite  Action = "group.invite_link"
	ActionGroupJoin    Action = "group.join"
	ActionGroupLeave   Action = "group.leave"
	// Channels followed and unfollowed through the API (detail: the
	// invite code or the channel).
	ActionChannelFollow   Action = "channel.follow"
	ActionChannelUnfollow Action = "channel.unfollow"
	// Labels changed through the API (detail: the label, and the chat or
	// message it was put on or taken off).
	ActionLabelCreate Action = "label.create"
	ActionLabelUpdate Action = "label.update"
	ActionLabelDelete Action = "label.delete"
	ActionLabelApply  Action = "label.apply"
	// The event subscriptions' changes.
	ActionSubscriptionCreate Action = "subscriptions.create"
	ActionSubscriptionPut    Action = "subscriptions.put"
	ActionSubscriptionDelete Action = "subscriptions.delete"
	// A contact blocked or unblocked through the API (detail: the contact).
	ActionContactBlock   Action = "contact.block"
	ActionContactUnblock Action = "contact.unblock"
	// The account's about text or picture changed through the API.
	ActionProfileUpdate Action = "profile.update"
	// ActionKeyUse records each request a named API key made; the
	// detail names the key and the request.
	ActionKeyUse    Action = "api.key_use"
	ActionKeyCreate Action = "keys.create"
	ActionKeyRevoke Action = "keys.revoke"
	// ActionApprovalApprove and ActionApprovalReject: a person decided on
	// a send held for approval.
	ActionApprovalApprove Action = "approvals.approve"
	ActionApprovalReject  Action = "approvals.reject"
)

// Actions lists every action, for the API's description.
var Actions = []Action{
	ActionPairingQR, ActionPairingCode, ActionLogout, ActionDashboardSignIn, ActionLogPurge,
	ActionAuditDelete, ActionWebhookRedeliver, ActionAPIKey, ActionAdminToken, ActionChatCode,
	ActionWebhookReplay, ActionGroupCreate, ActionGroupUpdate, ActionGroupPhoto, ActionGroupMembers, ActionGroupInvite,
	ActionGroupJoin, ActionGroupLeave, ActionSubscriptionCreate, ActionSubscriptionPut, ActionSubscriptionDelete,
	ActionContactBlock, ActionContactUnblock, ActionProfileUpdate,
	ActionChannelFollow, ActionChannelUnfollow, ActionLabelCreate, ActionLabelUpdate, ActionLabelDelete, ActionLabelApply,
	ActionKeyUse, ActionKeyCreate, ActionKeyRevoke, ActionApprovalApprove, ActionApprovalReject,
}

// Outcome is how the action ended.
type Outcome string

// The outcomes.
const (
	OutcomeSuccess  Outcome = "success"
	OutcomeRejected Outcome = "rejected"  // refused: invalid input, wrong credential, conflicting state
	OutcomeNotFound Outcome = "not_found" // the thing to act on did not exist
	OutcomeFailure  Outcome = "failure"   // the bridge could not carry it out
)

// Entry is one record.
type Entry struct {
	// ID is opaque to callers: a string the log hands out and takes back.
	// Within a week's database it is the row's number, never reused.
	ID      string
	Time    time.Time
	Action  Action
	Outcome Outcome
	// Client is the address the request came from.
	Client string
	// Detail says what was acted on ("date=2026-11-21 level=info"). It is
	// stored as given: never put a credential or message text in it.
	Detail string
}

// ErrNotFound: no record with that ID in that week.
var ErrNotFound = errors.New("no such audit record")

// rowID is the row an ID names: a positive decimal number in its plain
// form. Anything else names no record.
func rowID(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == id
}

// migrations of every weekly database; append, never edit a released step.
var migrations = []string{
	// AUTOINCREMENT: an ID is never reused after a deletion, so an ID in an
	// earlier deletion's record never comes to name another record.
	`CREATE TABLE audit_log (
		id      INTEGER PRIMARY KEY AUTOINCREMENT,
		at      INTEGER NOT NULL, -- Unix milliseconds, UTC
		action  TEXT    NOT NULL,
		outcome TEXT    NOT NULL,
		client  TEXT    NOT NULL DEFAULT '',
		detail  TEXT    NOT NULL DEFAULT ''
	)`,
}

// Trail is the set of weekly audit databases in one directory. It is safe for
// concurrent use; calls are serialized, which is plenty for a few admin
// actions a day and keeps the week switch simple.
type Trail struct {
	dir       string
	masterKey []byte
	now       func() time.Time

	mu      sync.Mutex
	current Week
	db      *sql.DB // the current week's, opened on first use
}

// Open returns the audit log kept in dir (datadir's AuditDir), encrypted with
// keys derived from masterKey. Nothing is opened until the first call.
func Open(dir string, masterKey []byte, now func() time.Time) (*Trail, error) {
	if len(masterKey) != sqlite.MasterKeyLen {
		return nil, fmt.Errorf("audit: master key must be %d bytes", sqlite.MasterKeyLen)
	}
	if now == nil {
		now = time.Now
	}
	// DATA_DIR is the operator's own setting, not request input.
	if err := os.MkdirAll(dir, 0o700); err != nil { //nolint:gosec // see above
		return nil, fmt.Errorf("audit: %w", err)
	}
	return &Trail{dir: dir, masterKey: append([]byte(nil), masterKey...), now: now}, nil
}

func (l *Trail) path(w Week) string { return filepath.Join(l.dir, w.String()+".db") }

// Record stores e in the current week's database, stamped with the clock's
// time (e.ID and e.Time are ignored), and returns its ID.
func (l *Trail) Record(ctx context.Context, e Entry) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.now().UTC()
	db, err := l.currentLocked(ctx, at)
	if err != nil {
		return "", err
	}
	res, err := db.ExecContext(ctx, `INSERT INTO audit_log (at, action, outcome, client, detail) VALUES (?, ?, ?, ?, ?)`,
		at.UnixMilli(), string(e.Action), string(e.Outcome), e.Client, e.Detail)
	if err != nil {
		return "", fmt.Errorf("audit: record %s: %w", e.Action, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return "", fmt.Errorf("audit: record %s: %w", e.Action, err)
	}
	return strconv.FormatInt(id, 10), nil
}

// List returns the records of week, oldest first; none (and no file
// created) for a week without a database.
func (l *Trail) List(ctx context.Context, week Week) ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var entries []Entry
	err := l.withWeekLocked(ctx, week, func(db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT id, at, action, outcome, client, detail FROM audit_log ORDER BY id`)
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var e Entry
			var id, at int64
			if err := rows.Scan(&id, &at, &e.Action, &e.Outcome, &e.Client, &e.Detail); err != nil {
				return err
			}
			e.ID, e.Time = strconv.FormatInt(id, 10), time.UnixMilli(at).UTC()
			entries = append(entries, e)
		}
		return rows.Err()
	})
	if errors.Is(err, os.ErrNotExist) {
		return []Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: list %s: %w", week, err)
	}
	if entries == nil {
		entries = []Entry{}
	}
	return entries, nil
}

// Delete removes record id from week's database; ErrNotFound when the week
// has no such record (or no database), whatever id is.
func (l *Trail) Delete(ctx context.Context, week Week, id string) error {
	row, ok := rowID(id)
	if !ok {
		return ErrNotFound
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.withWeekLocked(ctx, week, func(db *sql.DB) error {
		res, err := db.ExecContext(ctx, `DELETE FROM audit_log WHERE id = ?`, row)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		return nil
	})
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, ErrNotFound):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("audit: delete %s/%d: %w", week, row, err)
	}
	return nil
}

// currentLocked returns the database of at's week, closing the previous
// week's when the week has turned.
func (l *Trail) currentLocked(ctx context.Context, at time.Time) (*sql.DB, error) {
	week := WeekOf(at)
	if l.db != nil && week == l.current {
		return l.db, nil
	}
	db, err := l.openLocked(ctx, week)
	if err != nil {
		return nil, err
	}
	if l.db != nil {
		_ = l.db.Close()
	}
	l.db, l.current = db, week
	return db, nil
}

// withWeekLocked runs fn on week's database: the open one for the current
// week, otherwise one opened for fn alone. A week without a file gives
// os.ErrNotExist and creates nothing.
func (l *Trail) withWeekLocked(ctx context.Context, week Week, fn func(*sql.DB) error) error {
	if l.db != nil && week == l.current {
		return fn(l.db)
	}
	if _, err := os.Stat(l.path(week)); err != nil {
		return err
	}
	db, err := l.openLocked(ctx, week)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	return fn(db)
}

func (l *Trail) openLocked(ctx context.Context, week Week) (*sql.DB, error) {
	db, err := sqlite.Open(ctx, l.path(week), l.masterKey, purpose)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := sqlite.Migrate(ctx, db, migrations); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("audit: %s: %w", week, err)
	}
	return db, nil
}

// Close closes the current week's database.
func (l *Trail) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db == nil {
		return nil
	}
	err := l.db.Close()
	l.db = nil
	return err
}

// Verify checks that every existing audit database in dir decrypts with
// masterKey, changing nothing, so start-up can refuse a wrong
// ENCRYPTION_KEY before any file is written. A missing dir passes.
func Verify(ctx context.Context, dir string, masterKey []byte) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".db")
		if !ok || e.IsDir() {
			continue
		}
		if _, err := ParseWeek(name); err != nil {
			continue // not ours
		}
		if err := sqlite.Verify(ctx, filepath.Join(dir, e.Name()), masterKey, purpose); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	return nil
}
