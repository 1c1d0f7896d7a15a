package whatsapp

import (
	"context"
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
)

// ownRecipient is the account's own phone number.
func (m *Session) ownRecipient() (bridge.Recipient, error) {
	account := m.Status().Account
	if account == "" {
		return bridge.Recipient{}, bridge.ErrNotLinked
	}
	return bridge.PhoneRecipient(account), nil
}

// OwnProfile is the account's push name, about text and picture; the
// latter two asked as a contact's are (and cached alike).
func (m *Session) OwnProfile(ctx context.Context) (bridge.OwnProfile, error) {
	me, err := m.ownRecipient()
	if err != nil {
		return bridge.OwnProfile{}, err
	}
	p, ok := m.cachedProfile(me)
	if !ok {
		if p, err = m.ContactProfile(ctx, me); err != nil {
			return bridge.OwnProfile{}, err
		}
	}
	return bridge.OwnProfile{PushName: m.Status().PushName, ContactProfile: p}, nil
}

// ownProfileCached reports whether OwnProfile would answer from memory.
func (m *Session) ownProfileCached() bool {
	me, err := m.ownRecipient()
	if err != nil {
		return false
	}
	_, ok := m.cachedProfile(me)
	return ok
}

// SetAbout changes the account's about text.
func (m *Session) SetAbout(ctx context.Context, text string) error {
	return m.changeOwnProfile(ctx, func(ctx context.Context, cli *whatsmeow.Client, _ types.JID) error {
		return cli.SetStatusMessage(ctx, types.SetStatusInput{Text: &text})
	})
}

// SetPicture changes the account's profile picture to jpeg; nil removes
// it. WhatsApp takes only JPEG (bridge.ErrInvalidPicture otherwise).
func (m *Session) SetPicture(ctx context.Context, jpeg []byte) error {
	return m.changeOwnProfile(ctx, func(ctx context.Context, cli *whatsmeow.Client, me types.JID) error {
		_, err := cli.SetGroupPhoto(ctx, me, jpeg)
		if errors.Is(err, whatsmeow.ErrInvalidImageFormat) {
			return bridge.ErrInvalidPicture
		}
		return err
	})
}

// changeOwnProfile runs change on the linked client and forgets the kept
// own profile.
func (m *Session) changeOwnProfile(ctx context.Context, change func(context.Context, *whatsmeow.Client, types.JID) error) error {
	cli, err := m.readyClient()
	if err != nil {
		return err
	}
	me, err := m.ownRecipient()
	if err != nil {
		return err
	}
	jid := types.NewJID(me.ID, types.DefaultUserServer)
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	err = change(ctx, cli, jid)
	m.profiles.forget(cli, jid)
	if err != nil {
		if _, ok := errors.AsType[*bridge.Error](err); ok {
			return err
		}
		return sendFailed(ctx, fmt.Errorf("change own profile: %w", err))
	}
	return nil
}

// PrivacySettings asks WhatsApp for the account's privacy settings.
func (m *Session) PrivacySettings(ctx context.Context) (bridge.PrivacySettings, error) {
	cli, err := m.readyClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	s, err := cli.TryFetchPrivacySettings(ctx, true)
	if err != nil {
		return nil, sendFailed(ctx, fmt.Errorf("get privacy settings: %w", err))
	}
	out := bridge.PrivacySettings{}
	for name, value := range map[types.PrivacySettingType]types.PrivacySetting{
		types.PrivacySettingTypeGroupAdd: s.GroupAdd, types.PrivacySettingTypeLastSeen: s.LastSeen,
		types.PrivacySettingTypeStatus: s.Status, types.PrivacySettingTypeProfile: s.Profile,
		types.PrivacySettingTypeReadReceipts: s.ReadReceipts, types.PrivacySettingTypeOnline: s.Online,
		types.PrivacySettingTypeCallAdd: s.CallAdd, types.PrivacySettingTypeMessages: s.Messages,
		types.PrivacySettingTypeDefense: s.Defense, types.PrivacySettingTypeStickers: s.Stickers,
	} {
		if value != "" {
			out[string(name)] = string(value)
		}
	}
	return out, nil
}
