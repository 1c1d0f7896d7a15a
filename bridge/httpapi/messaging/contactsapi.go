package messaging

import (
	"context"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// The contact endpoints beyond the number check (API key): a contact's
// profile, and the account's block list. Each question that reaches
// WhatsApp spends a token of CHECK_RATE (the ContactBook's budget); a
// block or unblock is audited, since it changes the account.

// ContactAccount is what the contact endpoints ask of the contact book
// (*whatsapp.ContactBook) beyond Contacts.
type ContactAccount interface {
	// Profile is contact r's about text, picture and business profile,
	// cached ProfileTTL.
	Profile(ctx context.Context, r bridge.Recipient) (bridge.ContactProfile, error)
	// SetBlocked blocks or unblocks r on WhatsApp.
	SetBlocked(ctx context.Context, r bridge.Recipient, blocked bool) error
	// Blocklist is the account's block list.
	Blocklist(ctx context.Context) ([]bridge.BlockedContact, error)
}

type businessJSON struct {
	VerifiedName string   `json:"verified_name"`
	Email        string   `json:"email"`
	Address      string   `json:"address"`
	Categories   []string `json:"categories"`
}

type profileJSON struct {
	Contact       string        `json:"contact"`
	About         *string       `json:"about"`
	PictureID     *string       `json:"picture_id"`
	PictureURL    *string       `json:"picture_url"`
	PictureHidden bool          `json:"picture_hidden"`
	Business      *businessJSON `json:"business"`
	FetchedAt     string        `json:"fetched_at"`
}

type blockedJSON struct {
	Contact      string  `json:"contact"`
	ContactLID   *string `json:"contact_lid"`
	ContactPhone *string `json:"contact_phone"`
}

type blockAnswer struct {
	Contact string `json:"contact"`
	Blocked bool   `json:"blocked"`
}

// contactRoutes are a contact's profile, the block list and the account's
// own profile.
func (s *server) contactRoutes(r *mux.Router) {
	httpkit.Mount(r, []httpkit.Route{
		{Path: "/api/contacts/{number}/profile", Method: httpkit.Get, H: s.contactProfile},
		{Path: "/api/contacts/{number}/block", Method: httpkit.Post, H: s.blockContact},
		{Path: "/api/contacts/{number}/block", Method: httpkit.Del, H: s.unblockContact},
		{Path: "/api/blocklist", Method: httpkit.Get, H: s.blocklist},
		{Path: "/api/profile", Method: httpkit.Get, H: s.getProfile},
		{Path: "/api/profile", Method: http.MethodPut, H: s.putProfile},
		{Path: "/api/profile/privacy", Method: httpkit.Get, H: s.getPrivacy},
	}, s.keyed)
}

// mountDashboardContacts adds the dashboard's calls and blocks under
// prefix: GET /calls and /blocklist, POST and DELETE
// /contacts/{number}/block (the dashboard checks its session, and the
// changes' CSRF token).
func mountDashboardContacts(r *mux.Router, prefix string, s *server) {
	r.Handle(prefix+"/calls", s.Handler(s.listCalls)).Methods(httpkit.Get)
	r.Handle(prefix+"/blocklist", s.Handler(s.blocklist)).Methods(httpkit.Get)
	r.Handle(prefix+"/contacts/{number}/block", s.Handler(s.blockContact)).Methods(httpkit.Post)
	r.Handle(prefix+"/contacts/{number}/block", s.Handler(s.unblockContact)).Methods(httpkit.Del)
}

// contactAccount is the contact book's account side; nil when the wiring
// gave a book without one (tests of other parts).
func (s *server) contactAccount() (ContactAccount, error) {
	if a, ok := s.Contacts.(ContactAccount); ok {
		return a, nil
	}
	return nil, bridge.ErrNotLinked
}

// contactOfPath names the contact of GET/POST /api/contacts/{number}/…: a
// phone number on WhatsApp (checked within CHECK_RATE when not known), or a
// LID as it is.
func (s *server) contactOfPath(ctx context.Context, id string) (bridge.Recipient, error) {
	if lid, ok := strings.CutSuffix(id, "@lid"); ok {
		if !isDigits(lid) {
			return bridge.Recipient{}, errContactNumber
		}
		return bridge.Recipient{Kind: bridge.RecipientLID, ID: lid}, nil
	}
	number, err := parseNumber(id)
	if err != nil {
		return bridge.Recipient{}, err
	}
	c, err := s.Contacts.Contact(ctx, number)
	if err != nil {
		return bridge.Recipient{}, err
	}
	if !c.OnWhatsApp {
		return bridge.Recipient{}, bridge.ErrNotOnWhatsApp
	}
	return bridge.PhoneRecipient(number), nil
}

// contactProfile is GET /api/contacts/{number}/profile.
func (s *server) contactProfile(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	book, err := s.contactAccount()
	if err != nil {
		return httpkit.SessionError(err)
	}
	who, err := s.contactOfPath(r.Context(), mux.Vars(r)["number"])
	if err != nil {
		return withRetryAfter(w, httpkit.SessionError(err))
	}
	p, err := book.Profile(r.Context(), who)
	if err != nil {
		return withRetryAfter(w, httpkit.SessionError(err))
	}
	return httpkit.WriteJSON(w, http.StatusOK, profileOf(p))
}

func profileOf(p bridge.ContactProfile) profileJSON {
	out := profileJSON{Contact: p.Contact.String(), About: optionalString(p.About), PictureID: optionalString(p.PictureID),
		PictureURL: optionalString(p.PictureURL), PictureHidden: p.PictureHidden, FetchedAt: bridge.FormatTime(p.FetchedAt)}
	if b := p.Business; b != nil {
		out.Business = &businessJSON{VerifiedName: b.VerifiedName, Email: b.Email, Address: b.Address, Categories: b.Categories}
		if out.Business.Categories == nil {
			out.Business.Categories = []string{}
		}
	}
	return out
}

// blockContact is POST /api/contacts/{number}/block, unblockContact its
// DELETE: the contact is blocked (unblocked) on WhatsApp, contact.blocked
// reports it, and sends to it are refused (allowed again) on every door.
func (s *server) blockContact(w http.ResponseWriter, r *http.Request) error {
	return s.setBlocked(w, r, true)
}

func (s *server) unblockContact(w http.ResponseWriter, r *http.Request) error {
	return s.setBlocked(w, r, false)
}

func (s *server) setBlocked(w http.ResponseWriter, r *http.Request, blocked bool) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	action := audit.ActionContactUnblock
	if blocked {
		action = audit.ActionContactBlock
	}
	book, err := s.contactAccount()
	if err != nil {
		return s.Audit.RecordResult(r, action, "", httpkit.SessionError(err))
	}
	who, err := s.contactOfPath(r.Context(), mux.Vars(r)["number"])
	if err == nil {
		err = book.SetBlocked(r.Context(), who, blocked)
	}
	if err := s.Audit.RecordResult(r, action, who.String(), httpkit.SessionError(err)); err != nil {
		return withRetryAfter(w, err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, blockAnswer{Contact: who.String(), Blocked: blocked})
}

// blocklist is GET /api/blocklist: the contacts the account blocked.
func (s *server) blocklist(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	book, err := s.contactAccount()
	if err != nil {
		return httpkit.SessionError(err)
	}
	list, err := book.Blocklist(r.Context())
	if err != nil {
		return withRetryAfter(w, httpkit.SessionError(err))
	}
	out := make([]blockedJSON, 0, len(list))
	for _, c := range list {
		out = append(out, blockedJSON{Contact: c.Contact.String(), ContactLID: optionalRecipientString(c.ContactLID),
			ContactPhone: optionalRecipientString(c.ContactPhone)})
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{"blocked": out})
}

func optionalRecipientString(r bridge.Recipient) *string {
	if r.IsZero() {
		return nil
	}
	return optionalString(r.String())
}
