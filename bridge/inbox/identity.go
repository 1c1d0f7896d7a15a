package inbox

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// A contact is named by its phone number, its LID, or both. When a message
// names both and the pair is new, while the history holds messages that
// named the contact by one side alone (a hidden number, or a number whose
// LID was not known yet), the backend learns here that they are one
// person: a contact.identity event, in the transaction of the message that
// taught it, before that message's own event.

const (
	rememberIdentity = `INSERT INTO identities (lid, phone, learned_at) VALUES (?, ?, ?)
		ON CONFLICT (lid) DO UPDATE SET phone = excluded.phone, learned_at = excluded.learned_at
		WHERE phone <> excluded.phone`
	namedAlone = `SELECT EXISTS (SELECT 1 FROM inbox WHERE sender_lid = ? AND sender_phone = '' AND sender_lid <> ''),
		EXISTS (SELECT 1 FROM inbox WHERE sender_phone = ? AND sender_lid = '' AND sender_phone <> '')`
	markLIDFirst = `UPDATE identities SET lid_first = 1 WHERE lid = ?`
	knownLID     = `SELECT EXISTS (SELECT 1 FROM identities WHERE lid = ?)`
)

// learnIdentity remembers in's LID and phone number as a pair and
// announces a pair that joins what the history knew apart. A contact the
// history named by LID alone (a hidden number) is marked as known by LID
// first: its Cloud user id stays the one its LID gave (IdentityBook).
func (b *Inbox) learnIdentity(ctx context.Context, tx *sql.Tx, in bridge.Incoming) error {
	if in.FromLID.IsZero() || in.FromPhone.IsZero() || in.IsStatus() {
		return nil
	}
	lid, phone := in.FromLID.String(), in.FromPhone.String()
	var known bool
	if err := b.stmts.QueryRow(ctx, tx, knownLID, lid).Scan(&known); err != nil {
		return fmt.Errorf("inbox: identity of %s: %w", lid, err)
	}
	res, err := b.stmts.Exec(ctx, tx, rememberIdentity, lid, phone, b.opts.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("inbox: remember %s: %w", lid, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // known pair
	}
	var lidAlone, phoneAlone bool
	if err := b.stmts.QueryRow(ctx, tx, namedAlone, lid, phone).Scan(&lidAlone, &phoneAlone); err != nil {
		return fmt.Errorf("inbox: history of %s: %w", lid, err)
	}
	// Only a new pair takes a side: a known LID whose number changed keeps
	// the side it was known by first, as the book does.
	lidFirst := !known && lidAlone && !phoneAlone
	if lidFirst {
		if _, err := b.stmts.Exec(ctx, tx, markLIDFirst, lid); err != nil {
			return fmt.Errorf("inbox: remember %s: %w", lid, err)
		}
	}
	b.opts.Identities.learn(in.FromLID.ID, in.FromPhone.ID, lidFirst)
	if !lidAlone && !phoneAlone {
		return nil // a new contact, named by both from its first message
	}
	ev := webhook.ContactIdentity(bridge.ContactIdentity{Phone: in.FromPhone, LID: in.FromLID, PushName: in.PushName,
		At: b.opts.Now()})
	ev.ID = webhook.NewID()
	return b.opts.Webhooks.Enqueue(ctx, tx, ev)
}
