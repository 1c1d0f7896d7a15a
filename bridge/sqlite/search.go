package sqlite

// searchMigration adds full-text search (SQLite FTS5) over the text of the
// history, both ways: what contacts sent (inbox) and what the account sent
// (messages). The indexes are kept by triggers, so an entry is indexed in
// the very transaction that stores it and leaves the index in the one that
// deletes it: the retention sweeps of both tables sweep the index too, and
// no door can store a message without it. The existing history is indexed
// by the migration itself.
//
// inbox_search is an external-content index over inbox, keyed by inbox.id
// (an INTEGER PRIMARY KEY, stable across VACUUM); it stores no second copy
// of the text. The message log's key is a TEXT id and its rowid may change
// when VACUUM rewrites the file, so messages_search is contentless, keyed
// by messages_search_ids, which gives each logged message a stable number.
// Only non-empty bodies are indexed; unicode61 with diacritics removed
// lets "cafe" find "café".
//
// The same step adds what an assistant's overview of the chats reads
// (package history): inbox_chat holds one chat's history in time order,
// and chat_reads the time up to which the account marked each chat read
// (JID form), which its unread count starts from.
const searchMigration = `
	CREATE INDEX inbox_chat ON inbox (chat, received_at);
	CREATE TABLE chat_reads (
		chat    TEXT    PRIMARY KEY,
		read_at INTEGER NOT NULL
	);
	CREATE VIRTUAL TABLE inbox_search USING fts5(body, content='inbox', content_rowid='id',
		tokenize='unicode61 remove_diacritics 2');
	INSERT INTO inbox_search (rowid, body) SELECT id, body FROM inbox WHERE body <> '';
	CREATE TRIGGER inbox_search_insert AFTER INSERT ON inbox WHEN new.body <> '' BEGIN
		INSERT INTO inbox_search (rowid, body) VALUES (new.id, new.body);
	END;
	CREATE TRIGGER inbox_search_delete AFTER DELETE ON inbox WHEN old.body <> '' BEGIN
		INSERT INTO inbox_search (inbox_search, rowid, body) VALUES ('delete', old.id, old.body);
	END;
	CREATE TRIGGER inbox_search_update AFTER UPDATE OF body ON inbox BEGIN
		INSERT INTO inbox_search (inbox_search, rowid, body) SELECT 'delete', old.id, old.body WHERE old.body <> '';
		INSERT INTO inbox_search (rowid, body) SELECT new.id, new.body WHERE new.body <> '';
	END;

	CREATE TABLE messages_search_ids (
		number     INTEGER PRIMARY KEY,
		message_id TEXT    NOT NULL UNIQUE
	);
	CREATE VIRTUAL TABLE messages_search USING fts5(body, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2');
	INSERT INTO messages_search_ids (message_id) SELECT id FROM messages WHERE body <> '' ORDER BY created_at, id;
	INSERT INTO messages_search (rowid, body) SELECT s.number, m.body FROM messages_search_ids s JOIN messages m ON m.id = s.message_id;
	CREATE TRIGGER messages_search_insert AFTER INSERT ON messages WHEN new.body <> '' BEGIN
		INSERT INTO messages_search_ids (message_id) VALUES (new.id);
		INSERT INTO messages_search (rowid, body) VALUES (last_insert_rowid(), new.body);
	END;
	CREATE TRIGGER messages_search_delete AFTER DELETE ON messages WHEN old.body <> '' BEGIN
		DELETE FROM messages_search WHERE rowid = (SELECT number FROM messages_search_ids WHERE message_id = old.id);
		DELETE FROM messages_search_ids WHERE message_id = old.id;
	END;
	CREATE TRIGGER messages_search_update AFTER UPDATE OF body ON messages WHEN old.body <> new.body BEGIN
		DELETE FROM messages_search WHERE rowid = (SELECT number FROM messages_search_ids WHERE message_id = old.id);
		DELETE FROM messages_search_ids WHERE message_id = old.id;
		INSERT INTO messages_search_ids (message_id) SELECT new.id WHERE new.body <> '';
		INSERT INTO messages_search (rowid, body) SELECT last_insert_rowid(), new.body WHERE new.body <> '';
	END`
