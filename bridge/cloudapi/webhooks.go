package cloudapi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// SignatureHeader is the header Meta signs a webhook body in.
const SignatureHeader = "X-Hub-Signature-256"

// ErrNoCloudShape is Encode's answer to an event Cloud has no webhook for
// (session.status, a queued status, an edit, a revoke): a subscription
// in the cloud format skips it.
var ErrNoCloudShape = fmt.Errorf("the event has no Cloud API webhook: %w", webhook.ErrNoShape)

// Encode is event ev as the Cloud API's webhook for the account number:
// the body and its headers, signed with secret as Meta signs
// (X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>). Events with
// no Cloud counterpart are ErrNoCloudShape.
func Encode(account string, ev webhook.Event, secret []byte) ([]byte, http.Header, error) {
	return EncodeWith(account, nil, ev, secret)
}

// EncodeWith is Encode with the contacts' user ids issued by ids (the
// default, keyless ids when nil).
func EncodeWith(account string, ids *UserIDs, ev webhook.Event, secret []byte) ([]byte, http.Header, error) {
	value, err := cloudValue(account, ids, ev)
	if err != nil {
		return nil, nil, err
	}
	body, err := json.Marshal(envelope{Object: "whatsapp_business_account", Entry: []entry{{
		ID: WABAID(account), Changes: []change{{Field: "messages", Value: value}},
	}}})
	if err != nil {
		return nil, nil, fmt.Errorf("encode cloud webhook: %w", err)
	}
	body = asciiJSON(body)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(SignatureHeader, Sign(body, secret))
	return body, h, nil
}

// asciiJSON escapes every non-ASCII character of a JSON text as \uXXXX,
// as Meta's webhook bodies are: receivers that check the signature over
// the body as Meta writes it (whatsapp-api-js escapes before verifying)
// then agree with the bytes signed.
func asciiJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// Sign is the X-Hub-Signature-256 value of body under secret.
func Sign(body, secret []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

type envelope struct {
	Object string  `json:"object"`
	Entry  []entry `json:"entry"`
}

type entry struct {
	ID      string   `json:"id"`
	Changes []change `json:"changes"`
}

type change struct {
	Field string `json:"field"`
	Value value  `json:"value"`
}

type value struct {
	MessagingProduct string        `json:"messaging_product"`
	Metadata         metadata      `json:"metadata"`
	Contacts         []hookContact `json:"contacts,omitempty"`
	Messages         []hookMessage `json:"messages,omitempty"`
	Statuses         []hookStatus  `json:"statuses,omitempty"`
}

type metadata struct {
	DisplayPhoneNumber string `json:"display_phone_number"`
	PhoneNumberID      string `json:"phone_number_id"`
}

type hookContact struct {
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
	WaID string `json:"wa_id,omitempty"`
	// UserID is the contact's business-scoped-style user id (UserIDs):
	// on every message and status, as Meta's webhooks carry it since 2026.
	UserID string `json:"user_id"`
}

// standardEvent holds every field of the bridge's own events that the
// Cloud shapes need; Encode reads an event through its JSON, as it is
// stored in the outbox.
type standardEvent struct {
	Event      string  `json:"event"`
	WhatsAppID string  `json:"whatsapp_id"`
	Status     string  `json:"status"`
	Recipient  string  `json:"recipient"`
	Reason     string  `json:"reason"`
	From       string  `json:"from"`
	FromLID    *string `json:"from_lid"`
	FromPhone  *string `json:"from_phone"`
	Chat       string  `json:"chat"`
	PushName   string  `json:"push_name"`
	Type       string  `json:"type"`
	Text       string  `json:"text"`
	Timestamp  string  `json:"timestamp"`
	Quoted     string  `json:"quoted"`
	ReplyID    string  `json:"reply_id"`
	TargetID   string  `json:"target_id"`
	Emoji      *string `json:"emoji"`
	Media      *struct {
		ID       string `json:"id"`
		MimeType string `json:"mimetype"`
		FileName string `json:"file_name"`
		SHA256   string `json:"sha256"`
		PTT      bool   `json:"ptt"`
	} `json:"media"`
	Location *hookLocation `json:"location"`
	Contacts []struct {
		DisplayName string `json:"display_name"`
		VCard       string `json:"vcard"`
	} `json:"contacts"`
}

func cloudValue(account string, ids *UserIDs, ev webhook.Event) (value, error) {
	raw, err := json.Marshal(ev.Payload)
	if err != nil {
		return value{}, fmt.Errorf("read event: %w", err)
	}
	var e standardEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return value{}, fmt.Errorf("read event: %w", err)
	}
	v := value{MessagingProduct: "whatsapp", Metadata: metadata{DisplayPhoneNumber: account, PhoneNumberID: account}}
	switch ev.Type {
	case webhook.TypeMessageStatus:
		st, c, ok := statusOf(ids, e)
		if !ok {
			return value{}, ErrNoCloudShape
		}
		v.Contacts, v.Statuses = []hookContact{c}, []hookStatus{st}
	case webhook.TypeMessageUpsert, webhook.TypeMessageReaction:
		if ev.Type == webhook.TypeMessageReaction {
			e.Type = bridge.IncomingReaction // a change's payload names its kind by its event
		}
		c, m := messageOf(ids, e)
		if m.Interactive != nil && m.Context != nil {
			m.Context.From = account
		}
		v.Contacts, v.Messages = []hookContact{c}, []hookMessage{m}
	default:
		return value{}, ErrNoCloudShape
	}
	return v, nil
}

// unixSeconds is an RFC 3339 time as Cloud's timestamp: Unix seconds.
func unixSeconds(t string) string {
	parsed, err := time.Parse(time.RFC3339Nano, t)
	if err != nil {
		return "0"
	}
	return strconv.FormatInt(parsed.Unix(), 10)
}

// idOf is a JID as Cloud names it: a number's digits, anything else as it
// is (a group, a LID).
func idOf(jid string) string {
	r, err := bridge.RecipientFromJID(jid)
	if err != nil {
		if r, err = bridge.ParseRecipient(jid); err != nil {
			return jid
		}
	}
	return r.String()
}

// Handshake performs the receiver's verification as Meta does when a
// webhook is configured: GET target?hub.mode=subscribe&hub.verify_token=
// &hub.challenge=, which must answer 200 with the challenge as its body.
// A redirect is the answer, never followed, whatever client's CheckRedirect:
// following would send hub.verify_token to another host (in the URL and
// the Referer), as deliveries refuse to.
func Handshake(ctx context.Context, client *http.Client, target, verifyToken string) error {
	noRedirects := *client
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	client = &noRedirects
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("webhook target %q is not an http(s) URL", target)
	}
	challenge := newChallenge()
	q := u.Query()
	q.Set("hub.mode", "subscribe")
	q.Set("hub.verify_token", verifyToken)
	q.Set("hub.challenge", challenge)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("verification request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("verification request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	switch {
	case err != nil:
		return fmt.Errorf("verification answer: %w", err)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("the receiver refused the verification: %s", resp.Status)
	case strings.TrimSpace(string(body)) != challenge:
		return errors.New("the receiver did not echo hub.challenge")
	}
	return nil
}

// newChallenge is a random number, as Meta's challenges are.
func newChallenge() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(uint64(b[0])<<56|uint64(b[1])<<48|uint64(b[2])<<40|uint64(b[3])<<32|
		uint64(b[4])<<24|uint64(b[5])<<16|uint64(b[6])<<8|uint64(b[7]), 10)
}
