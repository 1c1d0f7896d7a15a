package cloudapi

import (
	"crypto/sha256"
	"crypto/subtle"
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
	id, acct := mux.Vars(r)["waba"], d.cfg.Account()
	if acct == "" || id != WABAID(acct) {
		return noObject(id)
	}
	return nil
}

// appID is the id the door gives the one "app" behind its credential: as
// the business account's, derived from the linked number.
func appID(account string) string { return WABAID("app:" + account) }

// subscribedApps is GET /{version}/{waba_id}/subscribed_apps: the one app,
// the bridge, which sends the account's webhooks (its subscriptions).
func (d *Door) subscribedApps(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkWABA(r); err != nil {
		return err
	}
	acct := d.cfg.Account()
	writeJSON(w, http.StatusOK, map[string]any{"data": []map[string]any{{"whatsapp_business_api_data": map[string]string{
		"id": appID(acct), "name": "msgbridge", "link": "https://" + r.Host + "/"}}}})
	return nil
}

// subscribeApp is POST and DELETE /{version}/{waba_id}/subscribed_apps:
// Graph's answer, success. The bridge's webhooks are its subscriptions
// (POST /api/admin/subscriptions, format cloud); a callback override here
// changes nothing, so that a client's set-up (Typebot's) completes.
func (d *Door) subscribeApp(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkWABA(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

// debugToken is GET /{version}/debug_token?input_token=: Graph's token
// inspection. The caller's credential was checked already; input_token is
// valid when it is that credential (compared in constant time), and its
// scopes name the business account, as a system user's token's do
// (Typebot's credential dialog reads granular_scopes' target_ids).
func (d *Door) debugToken(w http.ResponseWriter, r *http.Request) error {
	input := r.URL.Query().Get("input_token")
	if input == "" {
		return missingParam("missing_input_token", "debug_token needs input_token")
	}
	acct := d.cfg.Account()
	valid := subtle.ConstantTimeCompare([]byte(input), []byte(token(r))) == 1
	targets := []string{}
	if acct != "" {
		targets = []string{WABAID(acct), acct}
	}
	data := map[string]any{"app_id": appID(acct), "type": "SYSTEM_USER", "application": "msgbridge",
		"data_access_expires_at": 0, "expires_at": 0, "is_valid": valid,
		"scopes": []string{"whatsapp_business_management", "whatsapp_business_messaging"},
		"granular_scopes": []map[string]any{
			{"scope": "whatsapp_business_management", "target_ids": targets},
			{"scope": "whatsapp_business_messaging", "target_ids": targets},
		}}
	if !valid {
		data["error"] = map[string]any{"code": CodeAccessToken, "message": "The access token is not this bridge's credential"}
		data["scopes"], data["granular_scopes"] = []string{}, []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
	return nil
}
