package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/msgbridge/msgbridge/bridge"
)

// IdentityBook holds the LID and phone number pairs of the identities
// table in memory, each with the side the account knew the contact by
// first, so that whatever names a contact by either side (a message by
// LID alone, a status by number) can be brought to one: the Cloud door's
// user id of a contact derives from that side and never changes when the
// other side is learned (cloudapi.UserIDs).
//
// The book is read on every Cloud webhook's encoding, and a contact pair
// is a few dozen bytes: it is loaded once and kept in step by the inbox's
// own writes, in the transaction that writes the pair.
type IdentityBook struct {
	mu      sync.RWMutex
	byLID   map[string]pairEntry
	byPhone map[string]string // phone → LID
}

type pairEntry struct {
	phone    string
	lidFirst bool
}

// NewIdentityBook is an empty book.
func NewIdentityBook() *IdentityBook {
	return &IdentityBook{byLID: map[string]pairEntry{}, byPhone: map[string]string{}}
}

// Load reads every pair of db's identities table into the book.
func (k *IdentityBook) Load(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT lid, phone, lid_first FROM identities`)
	if err != nil {
		return fmt.Errorf("inbox: load identities: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var lid, phone string
		var lidFirst bool
		if err := rows.Scan(&lid, &phone, &lidFirst); err != nil {
			return fmt.Errorf("inbox: load identities: %w", err)
		}
		r, err := bridge.ParseRecipient(lid)
		if err != nil || r.Kind != bridge.RecipientLID {
			continue // not written by this code; the book only pairs LIDs
		}
		k.learn(r.ID, phone, lidFirst)
	}
	return rows.Err()
}

// learn records that lid and phone (their digits) are one contact; lidFirst keeps a side
// already recorded for lid (a changed number keeps the contact's side).
func (k *IdentityBook) learn(lid, phone string, lidFirst bool) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if old, ok := k.byLID[lid]; ok {
		delete(k.byPhone, old.phone)
		lidFirst = old.lidFirst
	}
	k.byLID[lid] = pairEntry{phone: phone, lidFirst: lidFirst}
	k.byPhone[phone] = lid
}

// Canonical is the side of r's contact the contact was known by first: r
// itself for a contact the book does not pair (or a group), else its
// phone number, or its LID for a contact first known by LID alone.
func (k *IdentityBook) Canonical(r bridge.Recipient) bridge.Recipient {
	if k == nil {
		return r
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	lid := r.ID
	switch r.Kind {
	case bridge.RecipientPhone:
		var ok bool
		if lid, ok = k.byPhone[r.ID]; !ok {
			return r
		}
	case bridge.RecipientLID:
	default:
		return r
	}
	e, ok := k.byLID[lid]
	if !ok {
		return r
	}
	if e.lidFirst {
		return bridge.Recipient{Kind: bridge.RecipientLID, ID: lid}
	}
	return bridge.Recipient{Kind: bridge.RecipientPhone, ID: e.phone}
}
