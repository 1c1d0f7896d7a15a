package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// credentialsPurpose separates session.db's encryption key from bridge.db's.
const credentialsPurpose = "credentials"

// credentials is whatsmeow's device store on the encrypted session.db.
type credentials struct {
	db        *sql.DB
	container *sqlstore.Container
	device    *store.Device
}

// openCredentials opens session.db (creating it when absent) and returns the
// stored device, or a new, unlinked one. A wrong key fails here, before
// anything is written.
func openCredentials(ctx context.Context, path string, masterKey []byte, log waLog.Logger) (*credentials, error) {
	db, err := sqlite.OpenSyncedByCaller(ctx, path, masterKey, credentialsPurpose)
	if err != nil {
		return nil, err
	}
	return credentialsOn(ctx, db, path, log)
}

// credentialsOn is openCredentials on session.db already open (see
// OpenExistingCredentials); on an error it closes db.
func credentialsOn(ctx context.Context, db *sql.DB, path string, log waLog.Logger) (*credentials, error) {
	container := sqlstore.NewWithDB(db, "sqlite3", log)
	if err := container.Upgrade(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("credentials store %s: %w", path, err)
	}
	device, err := container.GetFirstDevice(ctx)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("credentials store %s: %w", path, err)
	}
	return &credentials{db: db, container: container, device: device}, nil
}

// linked reports stored credentials of a linked account.
func (c *credentials) linked() bool { return c.device.ID != nil }

func (c *credentials) close() error { return c.db.Close() }

// wipeDir deletes every file in the credentials directory. It needs no
// network: logout must forget the account even when WhatsApp is unreachable.
func wipeDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("wipe credentials: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("wipe credentials: %w", err)
		}
	}
	return nil
}

// OpenExistingCredentials opens session.db when it exists, which checks that
// it decrypts with masterKey (sqlite.ErrWrongKey) and changes nothing; nil
// when it does not exist. Start-up verifies the key this way and hands the
// handle to New (Options.CredentialsDB) instead of opening the file twice.
func OpenExistingCredentials(ctx context.Context, path string, masterKey []byte) (*sql.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil //nolint:nilnil // absent: nothing to verify, New creates it
	}
	return sqlite.OpenSyncedByCaller(ctx, path, masterKey, credentialsPurpose)
}

// VerifyCredentials checks that an existing session.db decrypts with
// masterKey, changing nothing; an absent one passes.
func VerifyCredentials(ctx context.Context, path string, masterKey []byte) error {
	return sqlite.Verify(ctx, path, masterKey, credentialsPurpose)
}

// batchSignalWrites puts a batchedSignalStore in front of device's Signal
// stores: now when it is linked, else when pairing first saves it (whatsmeow's
// container gives it its SQL stores then). batched hears of each one.
func batchSignalWrites(device *store.Device, batched func(*batchedSignalStore)) {
	c := batchingContainer{DeviceContainer: device.Container, batched: batched}
	device.Container = c
	if device.Initialized {
		c.batch(device)
	}
}

// batchingContainer is whatsmeow's device container that keeps a device's
// Signal writes batched across its saves and forgets them when it is deleted.
type batchingContainer struct {
	store.DeviceContainer
	batched func(*batchedSignalStore)
}

func (c batchingContainer) PutDevice(ctx context.Context, device *store.Device) error {
	err := c.DeviceContainer.PutDevice(ctx, device)
	if device.Initialized {
		c.batch(device)
	}
	return err
}

// DeleteDevice drops the pending writes of a device being deleted (a
// logout): its sessions are gone.
func (c batchingContainer) DeleteDevice(ctx context.Context, device *store.Device) error {
	if s, ok := device.EventBuffer.(*batchedSignalStore); ok {
		s.discard()
	}
	return c.DeviceContainer.DeleteDevice(ctx, device)
}

// batch installs the batched store on an initialized device, once; the SQL
// container's first save resets the device's container, so it is set again.
func (c batchingContainer) batch(device *store.Device) {
	device.Container = c
	if _, done := device.EventBuffer.(*batchedSignalStore); done {
		return
	}
	inner, ok := device.EventBuffer.(signalStore)
	if !ok {
		return
	}
	s := newBatchedSignalStore(inner)
	device.Identities, device.Sessions, device.PreKeys, device.SenderKeys, device.EventBuffer = s, s, s, s, s
	c.batched(s)
}
