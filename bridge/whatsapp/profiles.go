package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
)

// ProfileTTL is how long a contact's profile is served from memory. A
// change WhatsApp announces (the contact's new picture or about text)
// forgets it sooner; a picture's URL stays valid for days.
const ProfileTTL = time.Hour

// maxCachedProfiles bounds the profiles kept in memory.
const maxCachedProfiles = 10_000

// profileCache keeps contacts' profiles by the JID they were asked by.
type profileCache struct {
	mu    sync.Mutex
	byJID map[string]bridge.ContactProfile
}

func (c *profileCache) get(jid string, now time.Time) (bridge.ContactProfile, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byJID[jid]
	return p, ok && now.Sub(p.FetchedAt) < ProfileTTL
}

func (c *profileCache) put(jid string, p bridge.ContactProfile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byJID == nil || len(c.byJID) >= maxCachedProfiles {
		c.byJID = map[string]bridge.ContactProfile{}
	}
	c.byJID[jid] = p
}

// forget drops what is kept of jid's user, by either of its JIDs.
func (c *profileCache) forget(cli *whatsmeow.Client, jid types.JID) {
	who, err := senderOf(context.Background(), cli, jid, types.EmptyJID)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byJID, jid.ToNonAD().String())
	if err == nil {
		for _, r := range []bridge.Recipient{who.FromLID, who.FromPhone} {
			if !r.IsZero() {
				delete(c.byJID, r.JID())
			}
		}
	}
}

// cachedProfile is the profile of r kept in memory, if any is younger than
// ProfileTTL.
func (m *Session) cachedProfile(r bridge.Recipient) (bridge.ContactProfile, bool) {
	return m.profiles.get(r.JID(), m.opts.Now())
}

// ContactProfile asks WhatsApp for the profile of contact r (a phone
// number or a LID): its about text and picture (one usync query), the
// picture's URL, and a business's profile; the answer is kept ProfileTTL.
func (m *Session) ContactProfile(ctx context.Context, r bridge.Recipient) (bridge.ContactProfile, error) {
	cli, err := m.readyClient()
	if err != nil {
		return bridge.ContactProfile{}, err
	}
	jid, err := types.ParseJID(r.JID())
	if err != nil {
		return bridge.ContactProfile{}, bridge.ErrInvalidRecipient
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	infos, err := cli.GetUserInfo(ctx, []types.JID{jid})
	if err != nil {
		return bridge.ContactProfile{}, sendFailed(ctx, fmt.Errorf("get user info: %w", err))
	}
	info := infos[jid]
	p := bridge.ContactProfile{Contact: r, About: info.Status, PictureID: info.PictureID, FetchedAt: m.opts.Now()}
	if err := m.readPicture(ctx, cli, jid, &p); err != nil {
		return bridge.ContactProfile{}, err
	}
	if info.VerifiedName != nil {
		if p.Business, err = m.businessProfile(ctx, cli, jid, info.VerifiedName); err != nil {
			return bridge.ContactProfile{}, err
		}
	}
	m.profiles.put(r.JID(), p)
	return p, nil
}

// readPicture fills p's picture URL: none when none is set, hidden when
// the contact's privacy settings hide it from the account.
func (m *Session) readPicture(ctx context.Context, cli *whatsmeow.Client, jid types.JID, p *bridge.ContactProfile) error {
	pic, err := cli.GetProfilePictureInfo(ctx, jid, nil)
	switch {
	case errors.Is(err, whatsmeow.ErrProfilePictureNotSet):
		p.PictureID = ""
	case errors.Is(err, whatsmeow.ErrProfilePictureUnauthorized):
		p.PictureID, p.PictureHidden = "", true
	case err != nil:
		return sendFailed(ctx, fmt.Errorf("get profile picture: %w", err))
	case pic != nil:
		p.PictureID, p.PictureURL = pic.ID, pic.URL
	}
	return nil
}

func (m *Session) businessProfile(ctx context.Context, cli *whatsmeow.Client, jid types.JID, name *types.VerifiedName) (*bridge.BusinessProfile, error) {
	b := &bridge.BusinessProfile{}
	if name.Details != nil {
		b.VerifiedName = name.Details.GetVerifiedName()
	}
	bp, err := cli.GetBusinessProfile(ctx, jid)
	if err != nil {
		return nil, sendFailed(ctx, fmt.Errorf("get business profile: %w", err))
	}
	b.Email, b.Address = bp.Email, bp.Address
	for _, c := range bp.Categories {
		b.Categories = append(b.Categories, c.Name)
	}
	return b, nil
}
