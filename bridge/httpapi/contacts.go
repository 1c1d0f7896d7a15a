package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
)

// Contacts answers whether phone numbers are on WhatsApp
// (*whatsapp.ContactBook, cached 24 h).
type Contacts interface {
	Contact(ctx context.Context, number string) (bridge.Contact, error)
	// Cached is the answer about number the book has without asking
	// WhatsApp; false when it has none.
	Cached(ctx context.Context, number string) (bridge.Contact, bool)
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
	"number must be a phone number with country code: 7-15 digits, an optional leading + (%%2B in a URL), no spaces or dashes, e.g. 4915112345678")

// contact is GET /api/contacts/{number}: whether the number is on WhatsApp,
// its JID and, when known, its LID. Answers are cached 24 h; an uncached
// number needs a connected session (503 otherwise).
func (s *server) contact(w http.ResponseWriter, r *http.Request) error {
	if _, err := strictQuery(r, "apiKey"); err != nil {
		return err
	}
	number, err := parseNumber(mux.Vars(r)["number"])
	if err != nil {
		return err
	}
	c, err := s.Contacts.Contact(r.Context(), number)
	if wait, ok := bridge.RetryAfterOf(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		return err
	}
	if err != nil {
		return SessionError(err)
	}
	return WriteJSON(w, http.StatusOK, contactAnswer{Number: c.Number, OnWhatsApp: c.OnWhatsApp,
		JID: optionalString(c.JID), LID: optionalString(c.LID)})
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
