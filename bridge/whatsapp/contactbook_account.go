package whatsapp

import (
	"context"

	"github.com/msgbridge/msgbridge/bridge"
)

// The ContactBook's questions about contacts beyond "is this number on
// WhatsApp": their profiles, and the account's block list. Each that
// reaches WhatsApp takes a token of the same budget as the number checks
// (CHECK_RATE, CHECK_BURST): asking about many contacts is the enumeration
// WhatsApp bans accounts for, and blocking many at once looks alike.

// Profile answers contact r's profile (a phone number or a LID): kept in
// memory for ProfileTTL, else asked within the budget; beyond it a
// KindRateLimited error whose cause is a bridge.RetryAfter.
func (b *ContactBook) Profile(ctx context.Context, r bridge.Recipient) (bridge.ContactProfile, error) {
	if p, ok := b.m.cachedProfile(r); ok {
		return p, nil
	}
	if err := b.spend(); err != nil {
		return bridge.ContactProfile{}, err
	}
	return b.m.ContactProfile(ctx, r)
}

// SetBlocked blocks or unblocks contact r within the budget.
func (b *ContactBook) SetBlocked(ctx context.Context, r bridge.Recipient, blocked bool) error {
	if err := b.spend(); err != nil {
		return err
	}
	return b.m.SetBlocked(ctx, r, blocked)
}

// Blocklist is the account's block list, as the session keeps it (read at
// each login, kept by WhatsApp's notifications); asking WhatsApp, within the
// budget, only when it was never read.
func (b *ContactBook) Blocklist(ctx context.Context) ([]bridge.BlockedContact, error) {
	if !b.m.blocklistLoaded() {
		if err := b.spend(); err != nil {
			return nil, err
		}
	}
	return b.m.Blocklist(ctx)
}

// spend takes a token of the budget now, or refuses with the time until
// the next one.
func (b *ContactBook) spend() error {
	if wait, ok := b.budget.Reserve(b.now(), 0); !ok {
		return errCheckRate(wait)
	}
	return nil
}

// OwnProfile is the account's own profile: from memory, else asked within
// the budget.
func (b *ContactBook) OwnProfile(ctx context.Context) (bridge.OwnProfile, error) {
	if !b.m.ownProfileCached() {
		if err := b.spend(); err != nil {
			return bridge.OwnProfile{}, err
		}
	}
	return b.m.OwnProfile(ctx)
}

// SetAbout changes the account's about text within the budget.
func (b *ContactBook) SetAbout(ctx context.Context, text string) error {
	if err := b.spend(); err != nil {
		return err
	}
	return b.m.SetAbout(ctx, text)
}

// SetPicture changes (nil: removes) the account's picture within the budget.
func (b *ContactBook) SetPicture(ctx context.Context, jpeg []byte) error {
	if err := b.spend(); err != nil {
		return err
	}
	return b.m.SetPicture(ctx, jpeg)
}

// PrivacySettings asks for the account's privacy settings within the budget.
func (b *ContactBook) PrivacySettings(ctx context.Context) (bridge.PrivacySettings, error) {
	if err := b.spend(); err != nil {
		return nil, err
	}
	return b.m.PrivacySettings(ctx)
}

// SetPushName changes the account's push name within the budget; a change
// refused before the phone shared its app state keys takes no token.
func (b *ContactBook) SetPushName(ctx context.Context, name string) error {
	if _, err := b.m.appStateWritable(ctx); err != nil {
		return err
	}
	if err := b.spend(); err != nil {
		return err
	}
	return b.m.SetPushName(ctx, name)
}
