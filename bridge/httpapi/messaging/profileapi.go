package messaging

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// The account's own profile (API key): read, its about text and picture
// changed (paced by CHECK_RATE and audited), and its privacy settings
// read. The push name is the phone's to set.

// OwnAccount is what the profile endpoints ask of the contact book
// (*whatsapp.ContactBook).
type OwnAccount interface {
	OwnProfile(ctx context.Context) (bridge.OwnProfile, error)
	SetAbout(ctx context.Context, text string) error
	// SetPicture changes the picture to jpeg; nil removes it.
	SetPicture(ctx context.Context, jpeg []byte) error
	PrivacySettings(ctx context.Context) (bridge.PrivacySettings, error)
}

// maxPictureBytes bounds a profile picture (WhatsApp shows 640 px).
const maxPictureBytes = 2 << 20

type ownProfileJSON struct {
	PushName string `json:"push_name"`
	profileJSON
}

// profileChange is PUT /api/profile's body: each field present is changed.
type profileChange struct {
	About   *string `json:"about"`
	Picture *string `json:"picture"` // base64 JPEG; "" removes the picture
}

func (s *server) ownAccount() (OwnAccount, error) {
	if a, ok := s.Contacts.(OwnAccount); ok {
		return a, nil
	}
	return nil, bridge.ErrNotLinked
}

// getProfile is GET /api/profile.
func (s *server) getProfile(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	account, err := s.ownAccount()
	if err != nil {
		return httpkit.SessionError(err)
	}
	p, err := account.OwnProfile(r.Context())
	if err != nil {
		return withRetryAfter(w, httpkit.SessionError(err))
	}
	return httpkit.WriteJSON(w, http.StatusOK, ownProfileJSON{PushName: p.PushName, profileJSON: profileOf(p.ContactProfile)})
}

// putProfile is PUT /api/profile: the about text and picture the body has
// are changed; the answer names what changed (a GET then reads the new
// profile from WhatsApp).
func (s *server) putProfile(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	var change profileChange
	if err := httpkit.DecodeJSONMax(w, r, &change, 4*maxPictureBytes/3+4096); err != nil {
		return err
	}
	about, picture, err := change.validate()
	if err != nil {
		return err
	}
	account, err := s.ownAccount()
	if err == nil && change.About != nil {
		err = account.SetAbout(r.Context(), about)
	}
	if err == nil && change.Picture != nil {
		err = account.SetPicture(r.Context(), picture)
	}
	if err := s.Audit.RecordResult(r, audit.ActionProfileUpdate, change.detail(), httpkit.SessionError(err)); err != nil {
		return withRetryAfter(w, err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, struct {
		Changed []string `json:"changed"`
	}{change.changed()})
}

// validate reads the change: an about text WhatsApp takes, a JPEG picture.
func (c profileChange) validate() (about string, picture []byte, err error) {
	if c.About == nil && c.Picture == nil {
		return "", nil, bridge.Invalid(bridge.CodeInvalidJSON, "give about, picture or both")
	}
	if c.About != nil {
		about = *c.About
		if !utf8.ValidString(about) || utf8.RuneCountInString(about) > bridge.MaxAboutLength ||
			strings.IndexFunc(about, unicode.IsControl) >= 0 {
			return "", nil, bridge.Invalid(bridge.CodeInvalidAbout,
				"about must be a text of at most %d characters, on one line", bridge.MaxAboutLength)
		}
	}
	if c.Picture != nil && *c.Picture != "" {
		if picture, err = base64.StdEncoding.DecodeString(*c.Picture); err != nil || len(picture) > maxPictureBytes ||
			!bytes.HasPrefix(picture, []byte{0xFF, 0xD8, 0xFF}) {
			return "", nil, bridge.ErrInvalidPicture
		}
	}
	return about, picture, nil
}

// detail is the audit record's word of what changed.
func (c profileChange) detail() string { return strings.Join(c.changed(), ", ") }

// changed names what the change changes.
func (c profileChange) changed() []string {
	what := []string{}
	if c.About != nil {
		what = append(what, "about")
	}
	if c.Picture != nil && *c.Picture == "" {
		what = append(what, "picture removed")
	} else if c.Picture != nil {
		what = append(what, "picture")
	}
	return what
}

// getPrivacy is GET /api/profile/privacy: the account's privacy settings,
// asked of WhatsApp within CHECK_RATE.
func (s *server) getPrivacy(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	account, err := s.ownAccount()
	if err != nil {
		return httpkit.SessionError(err)
	}
	settings, err := account.PrivacySettings(r.Context())
	if err != nil {
		return withRetryAfter(w, httpkit.SessionError(err))
	}
	return httpkit.WriteJSON(w, http.StatusOK, settings)
}
