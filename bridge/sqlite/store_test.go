package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	testKey  = bytes.Repeat([]byte{0x42}, MasterKeyLen)
	otherKey = bytes.Repeat([]byte{0x43}, MasterKeyLen)
)

const marker = "plaintext-marker-4915112345678"

var testSchema = []string{
	`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`,
	`ALTER TABLE notes ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0`,
}

func openMigrated(t testing.TB, path string, key []byte) *sql.DB {
	t.Helper()
	db, err := Open(context.Background(), path, key, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := Migrate(context.Background(), db, testSchema); err != nil {
		t.Fatal(err)
	}
	return db
}

// snapshot hashes every file in dir, to prove that an operation changed nothing.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func TestRoundTripAndNoPlaintextOnDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.db")
	db := openMigrated(t, path, testKey)
	if _, err := db.Exec(`INSERT INTO notes (body) VALUES (?)`, marker); err != nil {
		t.Fatal(err)
	}
	// While open, the write-ahead log holds the newest pages: check it too.
	assertNoPlaintext(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoPlaintext(t, dir)

	db2 := openMigrated(t, path, testKey)
	var body string
	if err := db2.QueryRow(`SELECT body FROM notes`).Scan(&body); err != nil || body != marker {
		t.Fatalf("reopened: %q, %v", body, err)
	}
}

func assertNoPlaintext(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) == 0 {
		t.Fatal("no files written")
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(b, []byte("SQLite format 3")) {
			t.Errorf("%s starts with the plaintext SQLite header", e.Name())
		}
		for _, s := range []string{marker, "4915112345678", "CREATE TABLE", "notes"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains %q in plaintext", e.Name(), s)
			}
		}
	}
}

func TestWrongKeyIsRefusedAndTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.db")
	db := openMigrated(t, path, testKey)
	if _, err := db.Exec(`INSERT INTO notes (body) VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	cases := map[string]struct {
		key     []byte
		purpose string
	}{
		"another master key": {otherKey, "test"},
		"another purpose":    {testKey, "credentials"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			db, err := Open(context.Background(), path, c.key, c.purpose)
			if err == nil {
				_ = db.Close()
				t.Fatal("opened with the wrong key")
			}
			if !errors.Is(err, ErrWrongKey) {
				t.Fatalf("error %v is not ErrWrongKey", err)
			}
			if strings.Contains(err.Error(), "4242") || strings.Contains(err.Error(), "4343") {
				t.Errorf("error leaks key material: %v", err)
			}
		})
	}
	after := snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("files before %v, after %v", before, after)
	}
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("%s changed after a wrong-key open", name)
		}
	}
}

func TestPlainSQLiteFileIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain.db")
	// A file that merely looks like SQLite: the encrypted VFS cannot read it.
	if err := os.WriteFile(path, append([]byte("SQLite format 3\x00"), make([]byte, 4080)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path, testKey, "test"); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("error %v is not ErrWrongKey", err)
	}
}

func TestMasterKeyLength(t *testing.T) {
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), []byte("short"), "test"); err == nil {
		t.Fatal("accepted a 5-byte key")
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := Open(ctx, path, testKey, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	if err := Migrate(ctx, db, testSchema[:1]); err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, db); v != 1 {
		t.Fatalf("version %d after one step", v)
	}
	// Running again applies only what is new, and a repeat is a no-op.
	for range 2 {
		if err := Migrate(ctx, db, testSchema); err != nil {
			t.Fatal(err)
		}
	}
	if v := userVersion(t, db); v != 2 {
		t.Fatalf("version %d after two steps", v)
	}
	if err := Migrate(ctx, db, testSchema[:1]); err == nil || !strings.Contains(err.Error(), "newer than this bridge knows") {
		t.Fatalf("older binary on newer schema: %v", err)
	}
	// A failing step leaves the schema at the last whole version.
	if err := Migrate(ctx, db, append(testSchema[:2:2], `CREATE TABLE broken (`)); err == nil {
		t.Fatal("a broken migration succeeded")
	}
	if v := userVersion(t, db); v != 2 {
		t.Fatalf("version %d after a failed step", v)
	}
}

func userVersion(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Concurrent writers from several connections queue on the busy timeout
// instead of failing with SQLITE_BUSY.
func TestConcurrentWriters(t *testing.T) {
	db := openMigrated(t, filepath.Join(t.TempDir(), "c.db"), testKey)
	db.SetMaxOpenConns(4)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := db.Exec(`INSERT INTO notes (body) VALUES ('w')`); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM notes`).Scan(&n); err != nil || n != writers*each {
		t.Fatalf("rows %d, %v", n, err)
	}
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "v.db")
	if err := Verify(ctx, path, otherKey, "test"); err != nil {
		t.Fatalf("absent file: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("Verify created the file")
	}
	db := openMigrated(t, path, testKey)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	if err := Verify(ctx, path, otherKey, "test"); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("wrong key: %v", err)
	}
	if err := Verify(ctx, path, testKey, "test"); err != nil {
		t.Fatalf("right key: %v", err)
	}
	after := snapshot(t, dir)
	if len(after) != len(before) || after["v.db"] != before["v.db"] {
		t.Error("Verify changed the files")
	}
}

// Every file of a database is private to the bridge's user (mode 0600), a
// new one from its creation and one left 0644 by an older version once it
// is opened with the right key; a wrong key changes no mode.
func TestFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	assertModes := func(path string, want os.FileMode) {
		t.Helper()
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			info, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if perm := info.Mode().Perm(); perm != want {
				t.Errorf("%s has mode %o, want %o", filepath.Base(f), perm, want)
			}
		}
	}
	fresh := filepath.Join(dir, "with #&%? chars.db") // modeof must name this file
	db := openMigrated(t, fresh, testKey)
	// No idle connection: the -wal and -shm go with the last one and are
	// made again by the next.
	db.SetMaxIdleConns(0)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `INSERT INTO notes (body) VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
	assertModes(fresh, 0o600)
	_ = conn.Close()

	old := filepath.Join(dir, "old.db")
	first := openMigrated(t, old, testKey)
	_ = first.Close()
	for _, f := range []string{old, old + "-wal", old + "-shm"} {
		if err := os.Chmod(f, 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if _, err := Open(context.Background(), old, otherKey, "test"); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("wrong key: %v", err)
	}
	if info, err := os.Stat(old); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("a wrong key changed the mode: %v, %v", info.Mode(), err)
	}
	openMigrated(t, old, testKey)
	assertModes(old, 0o600)
}
