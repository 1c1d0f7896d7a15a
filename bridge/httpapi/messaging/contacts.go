package messaging

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// Contacts answers whether phone numbers are on WhatsApp
// (*whatsapp.ContactBook, cached 24 h).
type Contacts interface {
	Contact(ctx context.Context, number string) (bridge.Contact, error)
	// Cached is the answer about number the book has without asking
	// WhatsApp; false when it has none.
	Cached(ctx context.Context, number string) (bridge.Contact, bool)
	// ByLID names the contact of a LID (its digits) by the phone number the
	// account learned for it, without asking WhatsApp; false when none is
	// known.
	ByLID(ctx context.Context, lid string) (bridge.Contact, bool, error)
}

// contactAnswer is GET /api/contacts/{number}'s body.
type contactAnswer struct {
	Number     string  `json:"number"`
	OnWhatsApp bool    `json:"on_whatsapp"`
	JID        *string `json:"jid"`
	LID        *string `json:"lid"`
}

// parseNumber accepts a phone number in a path: digits with country code,
// an optional leading '+', no separators.
func parseNumber(s string) (string, error) {
	digits := strings.TrimPrefix(s, "+")
	if strings.ContainsAny(digits, " -+") {
		return "", errContactNumber
	}
	n, err := bridge.NormalizePhone(digits)
	if err != nil {
		return "", errContactNumber
	}
	return n, nil
}

// errContactNumber names the forms GET /api/contacts/{number} accepts: a
// group or a LID is no number to check.
var errContactNumber = bridge.Invalid(bridge.CodeInvalidNumber,
	"number must be a phone number with country code: 7-15 digits, an optional leading + (%%2B in a URL), no spaces or dashes, e.g. 4915112345678; or a LID, <digits>@lid")

// contact is GET /api/contacts/{number}: whether the number is on WhatsApp,
// its JID and, when known, its LID. Answers are cached 24 h; an uncached
// number needs a connected session (503 otherwise).
func (s *server) contact(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	c, err := s.lookUpContact(r.Context(), mux.Vars(r)["number"])
	if wait, ok := bridge.RetryAfterOf(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		return err
	}
	if err != nil {
		return httpkit.SessionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, contactAnswer{Number: c.Number, OnWhatsApp: c.OnWhatsApp,
		JID: optionalString(c.JID), LID: optionalString(c.LID)})
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// lookUpContact answers for a phone number (asking WhatsApp within
// CHECK_RATE when no answer is cached) or for a LID, "<digits>@lid", by the
// number the account learned for it (never asking WhatsApp, which does not
// tell a hidden number).
func (s *server) lookUpContact(ctx context.Context, id string) (bridge.Contact, error) {
	if lid, ok := strings.CutSuffix(id, "@lid"); ok {
		if !isDigits(lid) {
			return bridge.Contact{}, errContactNumber
		}
		c, found, err := s.Contacts.ByLID(ctx, lid)
		if err != nil {
			return bridge.Contact{}, err
		}
		if !found {
			return bridge.Contact{}, bridge.Errorf(bridge.KindNotFound, bridge.CodeUnknownLID,
				"no phone number is known for %s@lid: the contact hides it, or the account never learned it", lid)
		}
		return c, nil
	}
	number, err := parseNumber(id)
	if err != nil {
		return bridge.Contact{}, err
	}
	return s.Contacts.Contact(ctx, number)
}

func isDigits(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
