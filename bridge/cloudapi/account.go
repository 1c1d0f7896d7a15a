package cloudapi

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
)

// WABAID is the WhatsApp Business Account id of the account number: derived
// from it, so that it is the same on every start and on every bridge of the
// number, and never a number's own digits (16 digits, as Meta's ids are
// around 15-16, starting with 1).
func WABAID(account string) string {
	sum := sha256.Sum256([]byte("msgbridge-waba:" + account))
	n := binary.BigEndian.Uint64(sum[:8]) % 1e15
	return strconv.FormatUint(1e15+n, 10)
}

// checkPhone refuses a phone_number_id that is not the linked account's
// number: Graph's answer to an id that names nothing. While no account is
// linked any number's digits are taken, so that sends queue as the bridge's
// own API queues them.
func (d *Door) checkPhone(_ *http.Request, id string) error {
	acct := d.cfg.Account()
	if acct == "" {
		if _, err := bridge.NormalizePhone(id); err != nil || id != digitsOnly(id) {
			return noObject(id)
		}
		return nil
	}
	if id != acct {
		return noObject(id)
	}
	return nil
}

func digitsOnly(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// phoneNumber is Graph's WhatsApp business phone number object.
type phoneNumber struct {
	ID                     string `json:"id"`
	DisplayPhoneNumber     string `json:"display_phone_number"`
	VerifiedName           string `json:"verified_name"`
	QualityRating          string `json:"quality_rating"`
	CodeVerificationStatus string `json:"code_verification_status"`
	PlatformType           string `json:"platform_type"`
	Throughput             struct {
		Level string `json:"level"`
	} `json:"throughput"`
}

func (d *Door) phoneObject() phoneNumber {
	acct := d.cfg.Account()
	p := phoneNumber{ID: acct, DisplayPhoneNumber: "+" + acct, VerifiedName: acct, QualityRating: "GREEN",
		CodeVerificationStatus: "VERIFIED", PlatformType: "CLOUD_API"}
	p.Throughput.Level = "STANDARD"
	return p
}

// getObject is GET /{version}/{id}: the phone number, the business account,
// or a media object, by what id names.
func (d *Door) getObject(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["id"]
	if err := d.authorize(r); err != nil {
		return err
	}
	acct := d.cfg.Account()
	switch {
	case acct != "" && id == acct:
		writeJSON(w, http.StatusOK, d.phoneObject())
		return nil
	case acct != "" && id == WABAID(acct):
		writeJSON(w, http.StatusOK, map[string]string{"id": id, "name": acct, "currency": "USD",
			"timezone_id": "0", "message_template_namespace": id})
		return nil
	}
	return d.getMedia(w, r, id)
}

// phoneNumbers is GET /{version}/{waba_id}/phone_numbers: the one number.
func (d *Door) phoneNumbers(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkWABA(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": []phoneNumber{d.phoneObject()}})
	return nil
}

// checkWABA authorizes r and refuses a business account id that is not the
// linked account's.
func (d *Door) checkWABA(r *http.Request) error {
	if err := d.authorize(r); err != nil {
		return err
	}
	id, acct := mux.Vars(r)["waba"], d.cfg.Account()
	if acct == "" || id != WABAID(acct) {
		return noObject(id)
	}
	return nil
}
