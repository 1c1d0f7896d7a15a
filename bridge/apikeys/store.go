package apikeys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// SecretPrefix starts every generated key, so that a key found in a log
// or a repository is recognisable as one of the bridge's.
const SecretPrefix = "mbk_"

// Sources of a key.
const (
	// SourceAPI: made through /api/admin/keys or the dashboard.
	SourceAPI = "api"
	// SourceResource: pushed by the operator from spec.apiKeys[].
	SourceResource = "resource"
)

// Key is a stored key as listed: never its secret.
type Key struct {
	bridge.Caller
	Source    string
	CreatedAt time.Time
}

// entry is a key in memory: its secret's hash and who it makes the caller.
type entry struct {
	hash   [sha256.Size]byte
	caller bridge.Caller
}

// Keys is the store of the scoped keys over bridge.db, with the owner's key
// (API_KEY) beside them. Reads go to a snapshot that every change
// replaces before it returns, so a revoked key is refused by the next
// request.
type Keys struct {
	db    *sql.DB
	now   func() time.Time
	owner [sha256.Size]byte
	// hasOwner: an unset API_KEY admits nobody.
	hasOwner bool

	snapshot atomic.Pointer[[]entry]
	// write serialises changes, so that snapshots are taken in order.
	write   sync.Mutex
	budgets *budgets
}

// Open loads the keys stored in db; owner is API_KEY; now the clock
// (time.Now when nil).
func Open(ctx context.Context, db *sql.DB, owner bridge.Secret, now func() time.Time) (*Keys, error) {
	if now == nil {
		now = time.Now
	}
	k := &Keys{db: db, now: now, budgets: newBudgets(now)}
	if owner != "" {
		k.owner, k.hasOwner = sha256.Sum256([]byte(owner.Reveal())), true
	}
	if err := k.reload(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

// Authenticate returns who presented the secret: the owner for API_KEY, the
// key's caller for a live scoped key, else bridge.ErrUnauthorized (also
// for an expired key: a caller cannot tell it from a wrong one). Every
// stored hash is compared, in constant time, whichever matches.
func (k *Keys) Authenticate(presented string) (bridge.Caller, error) {
	if presented == "" {
		return bridge.Caller{}, bridge.ErrUnauthorized
	}
	h := sha256.Sum256([]byte(presented))
	found, match := bridge.Caller{}, 0
	if k.hasOwner && subtle.ConstantTimeCompare(h[:], k.owner[:]) == 1 {
		found, match = bridge.Owner(), 1
	}
	for _, e := range *k.snapshot.Load() {
		if subtle.ConstantTimeCompare(h[:], e.hash[:]) == 1 {
			found, match = e.caller, 1
		}
	}
	if match == 0 || found.Expired(k.now()) {
		return bridge.Caller{}, bridge.ErrUnauthorized
	}
	return found, nil
}

// ErrKeyExists and ErrKeyNotFound answer a name taken or unknown.
var (
	ErrKeyExists   = bridge.Errorf(bridge.KindConflict, bridge.CodeKeyExists, "a key of that name exists; revoke it first")
	ErrKeyNotFound = bridge.Errorf(bridge.KindNotFound, bridge.CodeKeyNotFound, "no key of that name")
	errOwnerName   = bridge.Invalid(bridge.CodeInvalidKeyName, "the name API_KEY is the owner's key")
)

// Create stores a new key from r and returns it with its secret, which is
// never stored and cannot be shown again.
func (k *Keys) Create(ctx context.Context, r Request) (Key, bridge.Secret, error) {
	c, err := r.Validate(k.now())
	if err != nil {
		return Key{}, "", err
	}
	secret, err := newSecret()
	if err != nil {
		return Key{}, "", err
	}
	key := Key{Caller: c, Source: SourceAPI, CreatedAt: k.now().UTC()}
	if err := k.insert(ctx, key, secret, false); err != nil {
		return Key{}, "", err
	}
	return key, secret, nil
}

// Put stores the resource's key r with its secret (from the resource's
// Secret), replacing the resource's key of the name; a key of the name
// made through the API is not replaced (ErrKeyExists).
func (k *Keys) Put(ctx context.Context, r Request, secret bridge.Secret) (Key, error) {
	c, err := r.Validate(k.now())
	if err != nil {
		return Key{}, err
	}
	if len(secret.Reveal()) < 16 {
		return Key{}, bridge.Invalid(bridge.CodeInvalidKeySecret, "the key's secret must be at least 16 characters")
	}
	key := Key{Caller: c, Source: SourceResource, CreatedAt: k.now().UTC()}
	return key, k.insert(ctx, key, secret, true)
}

func newSecret() (bridge.Secret, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", bridge.Internal(bridge.CodeInternal, "no randomness for a key", err)
	}
	return bridge.Secret(SecretPrefix + base64.RawURLEncoding.EncodeToString(b)), nil
}

func (k *Keys) insert(ctx context.Context, key Key, secret bridge.Secret, replaceResource bool) error {
	if strings.EqualFold(key.Name, bridge.OwnerName) {
		return errOwnerName
	}
	h := sha256.Sum256([]byte(secret.Reveal()))
	if k.hasOwner && subtle.ConstantTimeCompare(h[:], k.owner[:]) == 1 {
		return bridge.Invalid(bridge.CodeInvalidKeySecret, "the key's secret is API_KEY's")
	}
	var expires any
	if !key.ExpiresAt.IsZero() {
		expires = key.ExpiresAt.UnixMilli()
	}
	k.write.Lock()
	defer k.write.Unlock()
	conflict := ""
	if replaceResource {
		conflict = ` ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, scopes = excluded.scopes, chats = excluded.chats,
			budget = excluded.budget, expires_at = excluded.expires_at, approval = excluded.approval WHERE source = 'resource'`
	}
	res, err := k.db.ExecContext(ctx, `INSERT INTO api_keys (name, hash, scopes, chats, budget, expires_at, approval, source, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`+conflict,
		key.Name, h[:], joinScopes(key.Scopes), joinChats(key.Chats), key.Budget, expires, key.Approval, key.Source, key.CreatedAt.UnixMilli())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return ErrKeyExists // the name, or (never by chance) the secret
		}
		return bridge.Internal(bridge.CodeStoreFailed, "the key could not be stored", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrKeyExists // an API key holds the resource's name
	}
	return k.reload(ctx)
}

// Revoke deletes the key name: its next request is refused.
func (k *Keys) Revoke(ctx context.Context, name string) error {
	k.write.Lock()
	defer k.write.Unlock()
	res, err := k.db.ExecContext(ctx, `DELETE FROM api_keys WHERE name = ?`, name)
	if err != nil {
		return bridge.Internal(bridge.CodeStoreFailed, "the key could not be revoked", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrKeyNotFound
	}
	k.budgets.forget(name)
	return k.reload(ctx)
}

// Sync makes the resource's keys those of want (name -> secret and
// request): it puts each and revokes the resource's keys it does not name.
func (k *Keys) Sync(ctx context.Context, want map[string]Resource) error {
	for _, r := range want {
		if _, err := k.Put(ctx, r.Request, r.Secret); err != nil {
			return fmt.Errorf("key %q: %w", r.Name, err)
		}
	}
	keys, err := k.List(ctx)
	if err != nil {
		return err
	}
	for _, key := range keys {
		if _, kept := want[key.Name]; key.Source == SourceResource && !kept {
			if err := k.Revoke(ctx, key.Name); err != nil && !errors.Is(err, ErrKeyNotFound) {
				return err
			}
		}
	}
	return nil
}

// Resource is a key of the resource with its secret.
type Resource struct {
	Request
	Secret bridge.Secret
}

// List returns every key, by name, without secrets.
func (k *Keys) List(ctx context.Context) ([]Key, error) {
	rows, err := k.db.QueryContext(ctx, `SELECT name, scopes, chats, budget, expires_at, approval, source, created_at
		FROM api_keys ORDER BY name`)
	if err != nil {
		return nil, bridge.Internal(bridge.CodeStoreFailed, "the keys could not be read", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Key
	for rows.Next() {
		key, _, err := scanKey(rows, false)
		if err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, rows.Err()
}

// reload replaces the snapshot with the stored keys; the caller holds
// k.write (or nobody else can yet).
func (k *Keys) reload(ctx context.Context) error {
	rows, err := k.db.QueryContext(ctx, `SELECT name, scopes, chats, budget, expires_at, approval, source, created_at, hash FROM api_keys`)
	if err != nil {
		return fmt.Errorf("read api keys: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var entries []entry
	for rows.Next() {
		key, hash, err := scanKey(rows, true)
		if err != nil {
			return err
		}
		entries = append(entries, entry{hash: hash, caller: key.Caller})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read api keys: %w", err)
	}
	k.snapshot.Store(&entries)
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanKey(row scanner, withHash bool) (Key, [sha256.Size]byte, error) {
	var (
		key           Key
		scopes, chats string
		expires       sql.NullInt64
		created       int64
		hash          []byte
		fixed         [sha256.Size]byte
		dest          = []any{&key.Name, &scopes, &chats, &key.Budget, &expires, &key.Approval, &key.Source, &created}
	)
	if withHash {
		dest = append(dest, &hash)
	}
	if err := row.Scan(dest...); err != nil {
		return Key{}, fixed, fmt.Errorf("read api key: %w", err)
	}
	for _, s := range splitList(scopes) {
		key.Scopes = append(key.Scopes, bridge.Scope(s))
	}
	for _, s := range splitList(chats) {
		r, err := bridge.ParseRecipient(s)
		if err != nil {
			return Key{}, fixed, fmt.Errorf("api key %q: stored chat %q: %w", key.Name, s, err)
		}
		key.Chats = append(key.Chats, r)
	}
	if expires.Valid {
		key.ExpiresAt = time.UnixMilli(expires.Int64).UTC()
	}
	key.CreatedAt = time.UnixMilli(created).UTC()
	copy(fixed[:], hash)
	return key, fixed, nil
}
