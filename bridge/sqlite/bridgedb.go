package sqlite

// bridge.db is the bridge's own encrypted database. The packages that keep
// state in it (whatsapp, sendqueue, webhook) each query their own tables;
// keeping the migrations in one ordered list here means a single schema
// version for the file, and lets one transaction span tables (a state change
// and the event it causes are committed together).

import (
	"context"
	"database/sql"
)

// purpose separates bridge.db's encryption key from the other databases'.
const purpose = "bridge"

// OpenBridgeDB opens (creating when absent) and migrates bridge.db at path.
func OpenBridgeDB(ctx context.Context, path string, masterKey []byte) (*sql.DB, error) {
	db, err := Open(ctx, path, masterKey, purpose)
	if err != nil {
		return nil, err
	}
	if err := MigrateBridgeDB(ctx, db); err != nil {
		return nil, err
	}
	if err := enableIncrementalVacuum(ctx, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// MigrateBridgeDB brings an open bridge.db's schema up to date (see
// OpenExistingBridgeDB); on an error it closes db.
func MigrateBridgeDB(ctx context.Context, db *sql.DB) error {
	if err := Migrate(ctx, db, migrations); err != nil {
		_ = db.Close()
		return err
	}
	return nil
}

// migrations are applied in order; append, never edit a released step.
// Times are Unix milliseconds (UTC), NULL when unknown.
var migrations = []string{
	// 1: the session's state and heartbeat, one row.
	`CREATE TABLE session_state (
		id              INTEGER PRIMARY KEY CHECK (id = 1),
		state           TEXT    NOT NULL,
		reason          TEXT    NOT NULL DEFAULT '',
		account         TEXT    NOT NULL DEFAULT '',
		push_name       TEXT    NOT NULL DEFAULT '',
		connected_since INTEGER,
		last_heartbeat  INTEGER,
		updated_at      INTEGER NOT NULL
	)`,
	// 2: the message log, which is also the durable send queue (a message
	// with next_attempt_at set is due then), idempotency keys, and the daily
	// delivery rollup that analytics reads instead of scanning the log.
	`CREATE TABLE messages (
		id              TEXT    PRIMARY KEY,
		whatsapp_id     TEXT    NOT NULL UNIQUE,
		request_id      TEXT    NOT NULL,
		position        INTEGER NOT NULL,
		recipient       TEXT    NOT NULL,
		type            TEXT    NOT NULL CHECK (type IN ('text', 'image', 'document')),
		body            TEXT    NOT NULL DEFAULT '',
		file_path       TEXT    NOT NULL DEFAULT '',
		file_name       TEXT    NOT NULL DEFAULT '',
		mimetype        TEXT    NOT NULL DEFAULT '',
		file_size       INTEGER NOT NULL DEFAULT 0,
		status          TEXT    NOT NULL CHECK (status IN ('Queued', 'Sent', 'Delivered', 'Read', 'Failed')),
		retry_count     INTEGER NOT NULL DEFAULT 0,
		attempts        INTEGER NOT NULL DEFAULT 0,
		last_error      TEXT    NOT NULL DEFAULT '',
		next_attempt_at INTEGER,
		created_at      INTEGER NOT NULL,
		updated_at      INTEGER NOT NULL
	);
	CREATE INDEX messages_due ON messages (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
	CREATE INDEX messages_created ON messages (created_at, id);
	-- status 0 and an empty response: the request was stored but its
	-- response not yet; a repeat then answers from the messages of request_id.
	CREATE TABLE idempotency_keys (
		key        TEXT    PRIMARY KEY,
		request_id TEXT    NOT NULL,
		status     INTEGER NOT NULL DEFAULT 0,
		response   BLOB    NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL
	);
	CREATE INDEX idempotency_created ON idempotency_keys (created_at);
	-- One row per UTC day (YYYY-MM-DD): messages that reached Sent for the
	-- first time, and messages that ended Failed, counted on the day it
	-- happened, in the same transaction as the status change.
	CREATE TABLE delivery_daily (
		day     TEXT    PRIMARY KEY,
		success INTEGER NOT NULL DEFAULT 0,
		failed  INTEGER NOT NULL DEFAULT 0
	)`,
	// 3: the webhook outbox. A row is inserted in the transaction of the
	// change it reports, so the event exists exactly when the change does.
	// Rows of one ordering_key are delivered one at a time, in id order;
	// rank lets a status event be dropped when a later status of the same
	// message is already queued or sent. expires_at ends the retries.
	`CREATE TABLE webhook_outbox (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		webhook_id      TEXT    NOT NULL UNIQUE,
		event           TEXT    NOT NULL,
		payload         BLOB    NOT NULL,
		ordering_key    TEXT    NOT NULL,
		rank            INTEGER NOT NULL DEFAULT 0,
		status          TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
		attempts        INTEGER NOT NULL DEFAULT 0,
		last_error      TEXT    NOT NULL DEFAULT '',
		next_attempt_at INTEGER NOT NULL,
		expires_at      INTEGER NOT NULL,
		created_at      INTEGER NOT NULL,
		delivered_at    INTEGER
	);
	CREATE INDEX webhook_due ON webhook_outbox (next_attempt_at, id) WHERE status = 'pending';
	CREATE INDEX webhook_head ON webhook_outbox (ordering_key, id) WHERE status = 'pending';
	CREATE INDEX webhook_rank ON webhook_outbox (ordering_key, rank);
	CREATE INDEX webhook_dead ON webhook_outbox (created_at, id) WHERE status = 'dead'`,
	// 4: what an idempotency key's first request asked for (a hash of its
	// recipient and items), so that the key reused with another request is
	// refused instead of answered with the first response. Empty: a key
	// stored before this step, which cannot be compared.
	`ALTER TABLE idempotency_keys ADD COLUMN request_hash TEXT NOT NULL DEFAULT ''`,
	// 5: conversations out. SQLite cannot change a CHECK in place, so the
	// log is rebuilt with the new types. reply_to, target_id and emoji are
	// WhatsApp ids and a reaction; details holds the JSON of what only some
	// types carry (mentions, ptt, location, contact card); account is the
	// account the message belongs to (empty: the next one linked). Rows are
	// copied in accepted order: the queue orders a chat by rowid.
	`CREATE TABLE messages_v5 (
		id              TEXT    PRIMARY KEY,
		whatsapp_id     TEXT    NOT NULL UNIQUE,
		request_id      TEXT    NOT NULL,
		position        INTEGER NOT NULL,
		recipient       TEXT    NOT NULL,
		type            TEXT    NOT NULL CHECK (type IN ('text', 'image', 'document', 'video', 'audio',
		                        'location', 'contact', 'reaction', 'edit', 'revoke')),
		body            TEXT    NOT NULL DEFAULT '',
		file_path       TEXT    NOT NULL DEFAULT '',
		file_name       TEXT    NOT NULL DEFAULT '',
		mimetype        TEXT    NOT NULL DEFAULT '',
		file_size       INTEGER NOT NULL DEFAULT 0,
		status          TEXT    NOT NULL CHECK (status IN ('Queued', 'Sent', 'Delivered', 'Read', 'Failed')),
		retry_count     INTEGER NOT NULL DEFAULT 0,
		attempts        INTEGER NOT NULL DEFAULT 0,
		last_error      TEXT    NOT NULL DEFAULT '',
		next_attempt_at INTEGER,
		created_at      INTEGER NOT NULL,
		updated_at      INTEGER NOT NULL,
		reply_to        TEXT    NOT NULL DEFAULT '',
		target_id       TEXT    NOT NULL DEFAULT '',
		emoji           TEXT    NOT NULL DEFAULT '',
		details         TEXT    NOT NULL DEFAULT '{}',
		account         TEXT    NOT NULL DEFAULT ''
	);
	INSERT INTO messages_v5 (id, whatsapp_id, request_id, position, recipient, type, body,
		file_path, file_name, mimetype, file_size, status, retry_count, attempts, last_error,
		next_attempt_at, created_at, updated_at)
	SELECT id, whatsapp_id, request_id, position, recipient, type, body,
		file_path, file_name, mimetype, file_size, status, retry_count, attempts, last_error,
		next_attempt_at, created_at, updated_at FROM messages ORDER BY created_at, id, position;
	DROP TABLE messages;
	ALTER TABLE messages_v5 RENAME TO messages;
	CREATE INDEX messages_due ON messages (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
	CREATE INDEX messages_created ON messages (created_at, id);
	CREATE INDEX messages_chat ON messages (recipient, created_at, position) WHERE status = 'Queued'`,
	// 6: the incoming history (package inbox). One row per incoming
	// message, reaction, edit or revoke, inserted in the transaction that
	// enqueues its webhook event, with that event's webhook_id, ordering_key
	// and body (payload), so that it can be listed and replayed with its
	// original webhook-id for INBOX_RETENTION, long after the outbox pruned
	// the delivery. sender is the webhook's "from"; sent_at the sender's
	// time, received_at the bridge's. (chat, whatsapp_id) is unique: a
	// message WhatsApp delivers again after a lost ack is stored and
	// announced once.
	`CREATE TABLE inbox (
		id           INTEGER PRIMARY KEY AUTOINCREMENT,
		webhook_id   TEXT    NOT NULL UNIQUE,
		event        TEXT    NOT NULL,
		ordering_key TEXT    NOT NULL,
		whatsapp_id  TEXT    NOT NULL,
		chat         TEXT    NOT NULL,
		sender       TEXT    NOT NULL,
		sender_lid   TEXT    NOT NULL DEFAULT '',
		sender_phone TEXT    NOT NULL DEFAULT '',
		push_name    TEXT    NOT NULL DEFAULT '',
		type         TEXT    NOT NULL,
		body         TEXT    NOT NULL DEFAULT '',
		sent_at      INTEGER NOT NULL,
		received_at  INTEGER NOT NULL,
		payload      BLOB    NOT NULL,
		UNIQUE (chat, whatsapp_id)
	);
	CREATE INDEX inbox_received ON inbox (received_at, id)`,
	// 7: incoming media, one row per attachment, inserted in the transaction
	// that stores its message. source is what downloads it again (opaque);
	// a pending row is (re)tried at next_attempt_at; the file is
	// DATA_DIR/media/<id's hex> once state is done.
	`CREATE TABLE media (
		id              TEXT    PRIMARY KEY,
		chat            TEXT    NOT NULL,
		whatsapp_id     TEXT    NOT NULL,
		mimetype        TEXT    NOT NULL DEFAULT '',
		file_name       TEXT    NOT NULL DEFAULT '',
		size            INTEGER NOT NULL DEFAULT 0,
		sha256          TEXT    NOT NULL DEFAULT '',
		source          BLOB    NOT NULL,
		state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
		error           TEXT    NOT NULL DEFAULT '',
		attempts        INTEGER NOT NULL DEFAULT 0,
		next_attempt_at INTEGER NOT NULL DEFAULT 0,
		created_at      INTEGER NOT NULL,
		expires_at      INTEGER NOT NULL
	);
	CREATE UNIQUE INDEX media_message ON media (chat, whatsapp_id);
	CREATE INDEX media_due ON media (next_attempt_at) WHERE state = 'pending';
	CREATE INDEX media_expires ON media (expires_at);
	CREATE INDEX media_created ON media (created_at)`,
	// 8: files received by POST /api/uploads, kept in the spool
	// until they expire; each send of one gets its own link to the file.
	`CREATE TABLE uploads (
		id         TEXT    PRIMARY KEY,
		path       TEXT    NOT NULL,
		file_name  TEXT    NOT NULL DEFAULT '',
		mimetype   TEXT    NOT NULL,
		file_size  INTEGER NOT NULL,
		sha256     TEXT    NOT NULL,
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL
	);
	CREATE INDEX uploads_expiry ON uploads (expires_at)`,
	// 9: WhatsApp's answers whether a phone number is on WhatsApp, kept a
	// day (GET /api/contacts/{number} and the check before a message's
	// attempt), so that a burst to one number asks once, across restarts.
	`CREATE TABLE contacts (
		number      TEXT    PRIMARY KEY,
		on_whatsapp INTEGER NOT NULL,
		jid         TEXT    NOT NULL DEFAULT '',
		lid         TEXT    NOT NULL DEFAULT '',
		checked_at  INTEGER NOT NULL
	);
	CREATE INDEX contacts_checked ON contacts (checked_at)`,
	// 11: WhatsApp's restriction of sending (a rate limit's back-off, the
	// reach-out lock's announced end) outlives a restart: a bridge that
	// forgot it spent a refused send to learn it again.
	`ALTER TABLE session_state ADD COLUMN restricted_until INTEGER`,
	// 12: the message templates of the Cloud API door, as clients created
	// them (POST message_templates), by name and language.
	`CREATE TABLE cloud_templates (
		id         TEXT    PRIMARY KEY,
		name       TEXT    NOT NULL,
		language   TEXT    NOT NULL,
		category   TEXT    NOT NULL,
		components TEXT    NOT NULL,
		created_at INTEGER NOT NULL,
		UNIQUE (name, language)
	)`,
	// 13: event subscriptions (package webhook). Every receiver has its own
	// delivery state over the one outbox: a row per (event, subscription),
	// so that a dead receiver's retries and order never hold another's. The
	// outbox is rebuilt because webhook_id is no longer unique by itself
	// (SQLite cannot drop a column's UNIQUE in place); its rows become the
	// subscription 'default', WEBHOOK_URL's. Secrets stay in this encrypted
	// file. event_log keeps every event a day, whatever the subscriptions,
	// for GET /api/events: its id is the stream's event id.
	`CREATE TABLE webhook_subscriptions (
		id          TEXT    PRIMARY KEY,
		target      TEXT    NOT NULL,
		events      TEXT    NOT NULL DEFAULT '',
		format      TEXT    NOT NULL DEFAULT 'standard',
		secret      TEXT    NOT NULL DEFAULT '',
		credentials TEXT    NOT NULL DEFAULT '',
		headers     TEXT    NOT NULL DEFAULT '{}',
		enabled     INTEGER NOT NULL DEFAULT 1,
		created_at  INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL
	);
	CREATE TABLE webhook_outbox_v13 (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		subscription    TEXT    NOT NULL DEFAULT 'default',
		webhook_id      TEXT    NOT NULL,
		event           TEXT    NOT NULL,
		payload         BLOB    NOT NULL,
		ordering_key    TEXT    NOT NULL,
		rank            INTEGER NOT NULL DEFAULT 0,
		status          TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
		attempts        INTEGER NOT NULL DEFAULT 0,
		last_error      TEXT    NOT NULL DEFAULT '',
		next_attempt_at INTEGER NOT NULL,
		expires_at      INTEGER NOT NULL,
		created_at      INTEGER NOT NULL,
		delivered_at    INTEGER,
		UNIQUE (subscription, webhook_id)
	);
	INSERT INTO webhook_outbox_v13 (id, webhook_id, event, payload, ordering_key, rank, status, attempts, last_error,
		next_attempt_at, expires_at, created_at, delivered_at)
	SELECT id, webhook_id, event, payload, ordering_key, rank, status, attempts, last_error,
		next_attempt_at, expires_at, created_at, delivered_at FROM webhook_outbox;
	DROP TABLE webhook_outbox;
	ALTER TABLE webhook_outbox_v13 RENAME TO webhook_outbox;
	CREATE INDEX webhook_due ON webhook_outbox (next_attempt_at, id) WHERE status = 'pending';
	CREATE INDEX webhook_head ON webhook_outbox (subscription, ordering_key, id) WHERE status = 'pending';
	CREATE INDEX webhook_rank ON webhook_outbox (subscription, ordering_key, rank);
	CREATE INDEX webhook_dead ON webhook_outbox (created_at, id) WHERE status = 'dead';
	CREATE INDEX webhook_of_subscription ON webhook_outbox (subscription, status);
	CREATE TABLE event_log (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		webhook_id TEXT    NOT NULL,
		event      TEXT    NOT NULL,
		payload    BLOB    NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX event_log_created ON event_log (created_at)`,
	// 14: polls and reply buttons out. The log is rebuilt, as in step 5,
	// for its CHECK to take the new types; a poll's question, options and
	// selectable count, and the buttons, are in details. Rows keep their order (the queue orders a chat by
	// rowid).
	`CREATE TABLE messages_v14 (
		id              TEXT    PRIMARY KEY,
		whatsapp_id     TEXT    NOT NULL UNIQUE,
		request_id      TEXT    NOT NULL,
		position        INTEGER NOT NULL,
		recipient       TEXT    NOT NULL,
		type            TEXT    NOT NULL CHECK (type IN ('text', 'image', 'document', 'video', 'audio',
		                        'location', 'contact', 'reaction', 'edit', 'revoke', 'poll', 'buttons')),
		body            TEXT    NOT NULL DEFAULT '',
		file_path       TEXT    NOT NULL DEFAULT '',
		file_name       TEXT    NOT NULL DEFAULT '',
		mimetype        TEXT    NOT NULL DEFAULT '',
		file_size       INTEGER NOT NULL DEFAULT 0,
		status          TEXT    NOT NULL CHECK (status IN ('Queued', 'Sent', 'Delivered', 'Read', 'Failed')),
		retry_count     INTEGER NOT NULL DEFAULT 0,
		attempts        INTEGER NOT NULL DEFAULT 0,
		last_error      TEXT    NOT NULL DEFAULT '',
		next_attempt_at INTEGER,
		created_at      INTEGER NOT NULL,
		updated_at      INTEGER NOT NULL,
		reply_to        TEXT    NOT NULL DEFAULT '',
		target_id       TEXT    NOT NULL DEFAULT '',
		emoji           TEXT    NOT NULL DEFAULT '',
		details         TEXT    NOT NULL DEFAULT '{}',
		account         TEXT    NOT NULL DEFAULT ''
	);
	INSERT INTO messages_v14 SELECT id, whatsapp_id, request_id, position, recipient, type, body, file_path,
		file_name, mimetype, file_size, status, retry_count, attempts, last_error, next_attempt_at, created_at,
		updated_at, reply_to, target_id, emoji, details, account FROM messages ORDER BY rowid;
	DROP TABLE messages;
	ALTER TABLE messages_v14 RENAME TO messages;
	CREATE INDEX messages_due ON messages (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
	CREATE INDEX messages_created ON messages (created_at, id);
	CREATE INDEX messages_chat ON messages (recipient, created_at, position) WHERE status = 'Queued'`,
	// 15: each voter's latest vote on a poll the account sent (package
	// inbox), written in the transaction that stores the vote's
	// message.poll_vote event; the tally of GET /api/messages/{id} reads
	// it. options is the JSON array of the chosen names; voted_at the
	// voter's time, so that a vote delivered late does not replace a newer.
	`CREATE TABLE poll_votes (
		poll_id  TEXT    NOT NULL,
		voter    TEXT    NOT NULL,
		options  TEXT    NOT NULL,
		voted_at INTEGER NOT NULL,
		PRIMARY KEY (poll_id, voter)
	)`,
	// 16: the webhook dispatcher reads the due rows one subscription at a
	// time, so that a dead receiver's backlog is never read for another
	// subscription's events; the index over all subscriptions' due rows
	// has no reader left.
	`CREATE INDEX webhook_due_of ON webhook_outbox (subscription, next_attempt_at, id) WHERE status = 'pending';
	DROP INDEX webhook_due`,
	// 17: only the head of each (subscription, ordering key) is due. The
	// rows queued behind it (behind = 1) are outside the due index, so a
	// receiver that fails at once with a backlog in one chat costs each
	// scan one row, not a walk of the backlog. The outbox sets behind when
	// it stores a row; the triggers make the next row the head in the
	// transaction that ends the head (delivered, dead, deleted), so that a
	// crash never leaves a chat without one.
	`ALTER TABLE webhook_outbox ADD COLUMN behind INTEGER NOT NULL DEFAULT 0;
	UPDATE webhook_outbox AS o SET behind = 1 WHERE o.status = 'pending' AND EXISTS (SELECT 1 FROM webhook_outbox p
		WHERE p.status = 'pending' AND p.subscription = o.subscription AND p.ordering_key = o.ordering_key AND p.id < o.id);
	DROP INDEX webhook_due_of;
	CREATE INDEX webhook_due_of ON webhook_outbox (subscription, next_attempt_at, id) WHERE status = 'pending' AND behind = 0;
	DROP INDEX webhook_head;
	CREATE INDEX webhook_head ON webhook_outbox (subscription, ordering_key, behind, id) WHERE status = 'pending';
	CREATE TRIGGER webhook_next_head AFTER UPDATE OF status ON webhook_outbox
		WHEN old.status = 'pending' AND new.status <> 'pending' AND old.behind = 0
	BEGIN
		UPDATE webhook_outbox SET behind = 0 WHERE id = (SELECT id FROM webhook_outbox
			WHERE subscription = old.subscription AND ordering_key = old.ordering_key AND status = 'pending' AND behind = 1
			ORDER BY id LIMIT 1);
	END;
	CREATE TRIGGER webhook_next_head_of_deleted AFTER DELETE ON webhook_outbox
		WHEN old.status = 'pending' AND old.behind = 0
	BEGIN
		UPDATE webhook_outbox SET behind = 0 WHERE id = (SELECT id FROM webhook_outbox
			WHERE subscription = old.subscription AND ordering_key = old.ordering_key AND status = 'pending' AND behind = 1
			ORDER BY id LIMIT 1);
	END`,
	// 18: GET /api/messages?chat= lists one chat's messages newest first;
	// this index holds them in that order, so that a page reads its rows
	// instead of scanning and sorting the whole log.
	`CREATE INDEX messages_recipient ON messages (recipient, created_at, id)`,
	// 19: the WhatsApp Web version the bridge last learned from WhatsApp
	// Web, one row: a restart announces it without waiting for WhatsApp Web.
	`CREATE TABLE wa_version (
		id         INTEGER PRIMARY KEY CHECK (id = 1),
		version    TEXT    NOT NULL,
		learned_at INTEGER NOT NULL
	)`,
	// 20: the LID and phone number pairs the incoming messages named
	// together, and the incoming history's entries that named one side
	// alone (partial indexes: only those rows), so that a pair learned
	// after the contact was named by one side alone is announced
	// (contact.identity) without scanning the history.
	`CREATE TABLE identities (
		lid        TEXT    PRIMARY KEY,
		phone      TEXT    NOT NULL,
		learned_at INTEGER NOT NULL
	);
	CREATE INDEX inbox_lid_alone ON inbox (sender_lid) WHERE sender_phone = '' AND sender_lid <> '';
	CREATE INDEX inbox_phone_alone ON inbox (sender_phone) WHERE sender_lid = '' AND sender_phone <> ''`,
	// 21: whether a pair's contact was named by LID alone before its
	// number was known (a hidden number): its Cloud user id derives from
	// the LID for good, not from the number learned later.
	`ALTER TABLE identities ADD COLUMN lid_first INTEGER NOT NULL DEFAULT 0`,
	// 22: the account's labels (WhatsApp Business) and the chats and
	// messages they are on, as WhatsApp's app state reported them: app
	// state arrives as changes, once, so the bridge keeps what they add up
	// to.
	`CREATE TABLE labels (
		id         TEXT    PRIMARY KEY,
		name       TEXT    NOT NULL,
		color      INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE TABLE label_chats (
		label_id TEXT NOT NULL,
		chat     TEXT NOT NULL,
		PRIMARY KEY (label_id, chat)
	) WITHOUT ROWID;
	CREATE INDEX label_chats_chat ON label_chats (chat);
	CREATE TABLE label_messages (
		label_id   TEXT NOT NULL,
		chat       TEXT NOT NULL,
		message_id TEXT NOT NULL,
		PRIMARY KEY (label_id, chat, message_id)
	) WITHOUT ROWID`,
	// 23: the scoped API keys (bridge/apikeys): the SHA-256 of each secret,
	// never the secret; scopes and chats as comma-separated lists; a key
	// from the resource (source 'resource') is replaced by the operator's
	// pushes, one made by the admin API is not.
	`CREATE TABLE api_keys (
		name       TEXT    PRIMARY KEY,
		hash       BLOB    NOT NULL UNIQUE,
		scopes     TEXT    NOT NULL,
		chats      TEXT    NOT NULL DEFAULT '',
		budget     INTEGER NOT NULL DEFAULT 0 CHECK (budget >= 0),
		expires_at INTEGER,
		approval   INTEGER NOT NULL DEFAULT 0,
		source     TEXT    NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'resource')),
		created_at INTEGER NOT NULL
	)`,
	// 24: the status AwaitingApproval (a send of a key with approval, held
	// until a person approves or rejects it): SQLite changes a CHECK only
	// by rebuilding the table; the indexes are made again, and the
	// awaiting ones, which are due never, are listed by their own.
	`CREATE TABLE messages_v24 (
		id              TEXT    PRIMARY KEY,
		whatsapp_id     TEXT    NOT NULL UNIQUE,
		request_id      TEXT    NOT NULL,
		position        INTEGER NOT NULL,
		recipient       TEXT    NOT NULL,
		type            TEXT    NOT NULL CHECK (type IN ('text', 'image', 'document', 'video', 'audio',
		                        'location', 'contact', 'reaction', 'edit', 'revoke', 'poll', 'buttons')),
		body            TEXT    NOT NULL DEFAULT '',
		file_path       TEXT    NOT NULL DEFAULT '',
		file_name       TEXT    NOT NULL DEFAULT '',
		mimetype        TEXT    NOT NULL DEFAULT '',
		file_size       INTEGER NOT NULL DEFAULT 0,
		status          TEXT    NOT NULL CHECK (status IN ('AwaitingApproval', 'Queued', 'Sent', 'Delivered', 'Read', 'Failed')),
		retry_count     INTEGER NOT NULL DEFAULT 0,
		attempts        INTEGER NOT NULL DEFAULT 0,
		last_error      TEXT    NOT NULL DEFAULT '',
		next_attempt_at INTEGER,
		created_at      INTEGER NOT NULL,
		updated_at      INTEGER NOT NULL,
		reply_to        TEXT    NOT NULL DEFAULT '',
		target_id       TEXT    NOT NULL DEFAULT '',
		emoji           TEXT    NOT NULL DEFAULT '',
		details         TEXT    NOT NULL DEFAULT '{}',
		account         TEXT    NOT NULL DEFAULT ''
	);
	INSERT INTO messages_v24 SELECT id, whatsapp_id, request_id, position, recipient, type, body, file_path,
		file_name, mimetype, file_size, status, retry_count, attempts, last_error, next_attempt_at, created_at,
		updated_at, reply_to, target_id, emoji, details, account FROM messages ORDER BY rowid;
	DROP TABLE messages;
	ALTER TABLE messages_v24 RENAME TO messages;
	CREATE INDEX messages_due ON messages (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
	CREATE INDEX messages_created ON messages (created_at, id);
	CREATE INDEX messages_chat ON messages (recipient, created_at, position) WHERE status = 'Queued';
	CREATE INDEX messages_recipient ON messages (recipient, created_at, id);
	CREATE INDEX messages_awaiting ON messages (created_at, id) WHERE status = 'AwaitingApproval'`,
	// 25: full-text search over the history, both ways (search.go); after
	// 24, whose rebuild of messages would drop its triggers.
	searchMigration,
}

// OpenExistingBridgeDB opens bridge.db when it exists, which checks that it
// decrypts with masterKey (ErrWrongKey) and changes nothing in it; nil when
// it does not exist. Start-up verifies the key this way and then migrates
// the same handle (MigrateBridgeDB) instead of opening the file twice.
func OpenExistingBridgeDB(ctx context.Context, path string, masterKey []byte) (*sql.DB, error) {
	if !fileExists(path) {
		return nil, nil //nolint:nilnil // absent is not an error: there is nothing to verify
	}
	return Open(ctx, path, masterKey, purpose)
}

// VerifyBridgeDB checks that an existing bridge.db decrypts with masterKey,
// changing nothing; an absent one passes.
func VerifyBridgeDB(ctx context.Context, path string, masterKey []byte) error {
	return Verify(ctx, path, masterKey, purpose)
}
