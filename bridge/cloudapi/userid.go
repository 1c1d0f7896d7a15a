package cloudapi

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"hash"
	"strconv"
	"strings"
	"sync"

	"github.com/msgbridge/msgbridge/bridge"
)

// UserIDs issues the door's business-scoped-style user ids (Meta's BSUID,
// "CC.alnum"): one per contact, the same on every webhook and every start,
// and accepted back as a send's recipient.
//
// An id is the contact's identity sealed under a key derived from
// ENCRYPTION_KEY, so that the door keeps no table of them and a reader
// learns no number from one: <region>.<base32 of siv(10) || identity xor
// stream(9)>, where identity is a kind byte (phone or LID) and the number
// as 8 bytes, siv is HMAC-SHA256(key, identity) and stream is
// HMAC-SHA256(key, siv). Resolving it recomputes siv, so a changed or
// foreign id is refused. The region (ISO 3166 of the number's calling code
// where the frozen table below knows it, else ZZ) is decoration: the
// resolver ignores it.
//
// The identity is the side the account knew the contact by first
// (Identities): its phone number for most, its LID for a contact whose
// number was hidden when it first wrote, even once an event names the
// number too (a status names the recipient as the send did; a sender
// comes with its number when WhatsApp shares it). A contact the account
// cannot pair yet is named by the number when the event names one, else
// by the LID.
type UserIDs struct {
	key []byte
	// known pairs a contact's number and LID; nil pairs none.
	known Identities
	// macs are keyed HMAC-SHA256 states, reset and reused: a webhook's
	// encoding derives an id or two, and a fresh HMAC costs its keyed pads.
	macs sync.Pool
}

// Identities brings a contact named by its number or its LID to the side
// the account knew it by first (*inbox.IdentityBook).
type Identities interface {
	Canonical(r bridge.Recipient) bridge.Recipient
}

// Knowing makes u derive each contact's id from the side known reports.
func (u *UserIDs) Knowing(known Identities) *UserIDs {
	u.known = known
	return u
}

// NewUserIDs derives the ids' key from the bridge's master key.
func NewUserIDs(masterKey []byte) (*UserIDs, error) {
	key, err := hkdf.Key(sha256.New, masterKey, nil, "msgbridge cloud user id", 32)
	if err != nil {
		return nil, err
	}
	return newUserIDs(key), nil
}

func newUserIDs(key []byte) *UserIDs {
	u := &UserIDs{key: key}
	u.macs.New = func() any { return hmac.New(sha256.New, u.key) }
	return u
}

// defaultUserIDs issues ids where no master key was given (tests, a door
// built without one): deterministic, not secret.
var defaultUserIDs = newUserIDs([]byte("msgbridge cloud user id: no master key"))

// ids is u, or the default.
func (u *UserIDs) ids() *UserIDs {
	if u == nil {
		return defaultUserIDs
	}
	return u
}

const (
	idKindPhone = 1
	idKindLID   = 2
	idKindGroup = 3
	sivBytes    = 10
	bodyBytes   = 9
)

// lowerBase32 is base32 in lower case without padding: letters and digits.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// For is the user id of r, a phone number, a LID or a group (of a number's
// id: groups made before 2021, <creator>-<time>, have none); "" for
// anything else.
func (u *UserIDs) For(r bridge.Recipient) string {
	if u != nil && u.known != nil {
		r = u.known.Canonical(r)
	}
	var kind byte
	switch r.Kind {
	case bridge.RecipientPhone:
		kind = idKindPhone
	case bridge.RecipientLID:
		kind = idKindLID
	case bridge.RecipientGroup:
		kind = idKindGroup // a group's statuses name it as their recipient
	default:
		return ""
	}
	n, err := strconv.ParseUint(r.ID, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != r.ID {
		return "" // not a plain number: no id rather than one that resolves elsewhere
	}
	var plain [bodyBytes]byte
	plain[0] = kind
	binary.BigEndian.PutUint64(plain[1:], n)
	u = u.ids()
	siv := u.mac(plain[:])[:sivBytes]
	out := append(make([]byte, 0, sivBytes+bodyBytes), siv...)
	stream := u.mac(siv)
	for i := range plain {
		out = append(out, plain[i]^stream[i])
	}
	region := "ZZ"
	if kind == idKindPhone {
		region = regionOf(r.ID)
	}
	return region + "." + lowerBase32.EncodeToString(out)
}

// Resolve is the contact user id names; false when it is no id this key
// issued.
func (u *UserIDs) Resolve(id string) (bridge.Recipient, bool) {
	_, body, ok := strings.Cut(id, ".")
	if !ok {
		return bridge.Recipient{}, false
	}
	raw, err := lowerBase32.DecodeString(strings.ToLower(body))
	if err != nil || len(raw) != sivBytes+bodyBytes {
		return bridge.Recipient{}, false
	}
	u = u.ids()
	siv, sealed := raw[:sivBytes], raw[sivBytes:]
	stream := u.mac(siv)
	plain := make([]byte, bodyBytes)
	for i := range sealed {
		plain[i] = sealed[i] ^ stream[i]
	}
	if !hmac.Equal(u.mac(plain)[:sivBytes], siv) {
		return bridge.Recipient{}, false
	}
	number := strconv.FormatUint(binary.BigEndian.Uint64(plain[1:]), 10)
	switch plain[0] {
	case idKindPhone:
		return bridge.PhoneRecipient(number), true
	case idKindLID:
		return bridge.Recipient{Kind: bridge.RecipientLID, ID: number}, true
	case idKindGroup:
		return bridge.Recipient{Kind: bridge.RecipientGroup, ID: number}, true
	}
	return bridge.Recipient{}, false
}

// mac is HMAC-SHA256 of data under the ids' key.
func (u *UserIDs) mac(data []byte) []byte {
	h, _ := u.macs.Get().(hash.Hash) // the pool makes only these
	h.Reset()
	h.Write(data)
	sum := h.Sum(nil)
	u.macs.Put(h)
	return sum
}

// callingRegions is a frozen table of calling codes to ISO 3166 regions:
// an id's region never changes, so rows are never changed or added (a
// calling code shared by several regions is the first listed; +1 is US).
var callingRegions = map[string]string{
	"1": "US", "7": "RU", "20": "EG", "27": "ZA", "30": "GR", "31": "NL", "32": "BE", "33": "FR", "34": "ES",
	"36": "HU", "39": "IT", "40": "RO", "41": "CH", "43": "AT", "44": "GB", "45": "DK", "46": "SE", "47": "NO",
	"48": "PL", "49": "DE", "51": "PE", "52": "MX", "53": "CU", "54": "AR", "55": "BR", "56": "CL", "57": "CO",
	"58": "VE", "60": "MY", "61": "AU", "62": "ID", "63": "PH", "64": "NZ", "65": "SG", "66": "TH", "81": "JP",
	"82": "KR", "84": "VN", "86": "CN", "90": "TR", "91": "IN", "92": "PK", "93": "AF", "94": "LK", "95": "MM",
	"98": "IR", "212": "MA", "213": "DZ", "216": "TN", "233": "GH", "234": "NG", "254": "KE", "255": "TZ",
	"256": "UG", "351": "PT", "353": "IE", "358": "FI", "380": "UA", "420": "CZ", "593": "EC", "880": "BD",
	"966": "SA", "971": "AE", "972": "IL",
}

// regionOf is the region of a number's digits (its calling code is the
// longest of 1-3 leading digits the table knows), ZZ when unknown.
func regionOf(digits string) string {
	for n := 3; n >= 1; n-- {
		if len(digits) > n {
			if r, ok := callingRegions[digits[:n]]; ok {
				return r
			}
		}
	}
	return "ZZ"
}
