package cloudapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// maxMessageBody bounds a Cloud message body, as the JSON door bounds its
// own: a full text, a vCard, an interactive message fit.
const maxMessageBody = 256 << 10

// cloudMessage is the body of POST /{version}/{phone_number_id}/messages:
// a message, or a read mark ({"status":"read","message_id"}). Fields a
// client may send that change nothing here (recipient_type,
// biz_opaque_callback_data) are ignored, as Graph ignores what it does not
// need.
type cloudMessage struct {
	MessagingProduct string                  `json:"messaging_product"`
	To               string                  `json:"to"`
	Recipient        string                  `json:"recipient"`
	RecipientType    string                  `json:"recipient_type"`
	Type             string                  `json:"type"`
	Status           string                  `json:"status"`
	MessageID        string                  `json:"message_id"`
	Context          *cloudContext           `json:"context"`
	Text             *cloudText              `json:"text"`
	Image            *cloudMedia             `json:"image"`
	Video            *cloudMedia             `json:"video"`
	Audio            *cloudMedia             `json:"audio"`
	Document         *cloudMedia             `json:"document"`
	Sticker          *cloudMedia             `json:"sticker"`
	Location         *cloudPlace             `json:"location"`
	Contacts         graphValue[[]cloudCard] `json:"contacts"`
	Reaction         *cloudReact             `json:"reaction"`
	Interactive      *interactive            `json:"interactive"`
	Template         *templateUse            `json:"template"`
}

type cloudContext struct {
	MessageID string `json:"message_id"`
}

type cloudText struct {
	Body       string `json:"body"`
	PreviewURL bool   `json:"preview_url"`
}

type cloudMedia struct {
	ID       string `json:"id"`
	Link     string `json:"link"`
	Caption  string `json:"caption"`
	Filename string `json:"filename"`
	Voice    *bool  `json:"voice"`
}

type cloudPlace struct {
	Latitude  *float64 `json:"latitude"`
	Longitude *float64 `json:"longitude"`
	Name      string   `json:"name"`
	Address   string   `json:"address"`
}

type cloudReact struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// graphValue is a parameter as Graph takes it: its JSON value, or a string
// holding that JSON (whatsapp-api-js sends contacts so, and Graph accepts
// it).
type graphValue[T any] struct{ V T }

func (g *graphValue[T]) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	return json.Unmarshal(b, &g.V)
}

// apiMessage is a Cloud message translated into the bridge's own terms
// (those of POST /api/messages), which become the send use case's draft.
type apiMessage struct {
	To       string
	Type     string
	Text     string
	ReplyTo  *string
	Media    *apiMedia
	Location *cloudPlace
	Contact  *apiContact
	Buttons  []apiButton
}

// apiMedia is a media message's file: an upload by id, or a linked file
// the door fetched into the spool (file, owned by the message until it is
// handed to the send).
type apiMedia struct {
	UploadID string
	PTT      *bool
	FileName string
	file     *spool.File
}

type apiContact struct {
	VCard string
}

// sentAnswer is Graph's answer to a send.
type sentAnswer struct {
	MessagingProduct string        `json:"messaging_product"`
	Contacts         []sentContact `json:"contacts"`
	Messages         []sentMessage `json:"messages"`
}

type sentContact struct {
	Input  string `json:"input"`
	WaID   string `json:"wa_id"`
	UserID string `json:"user_id,omitempty"`
}

type sentMessage struct {
	ID            string `json:"id"`
	MessageStatus string `json:"message_status,omitempty"`
}

// postMessage is POST /{version}/{phone_number_id}/messages.
func (d *Door) postMessage(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkPhone(r, mux.Vars(r)["phone"]); err != nil {
		return err
	}
	key, err := sendqueue.ParseIdempotencyKey(r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	var m cloudMessage
	if err := decodeBody(w, r, &m); err != nil {
		return err
	}
	if m.MessagingProduct != "whatsapp" {
		return invalidParam("missing_messaging_product", `the parameter messaging_product is required and must be "whatsapp"`)
	}
	m.MessageID = plainMessageID(m.MessageID)
	if m.Context != nil {
		m.Context.MessageID = plainMessageID(m.Context.MessageID)
	}
	switch {
	case m.Status == "read":
		return d.markRead(w, r, m)
	case m.Status != "":
		return invalidParam("invalid_status", `status takes "read"`)
	}
	input, err := d.resolveRecipient(&m)
	if err != nil {
		return err
	}
	if m.Type == "reaction" {
		return d.react(w, r, m, input, key)
	}
	if m.Type == "text" && m.Text != nil && utf8.RuneCountInString(m.Text.Body) > maxTextBody {
		return invalidValue(bridge.CodeTextTooLong, "text.body is over Cloud's 4,096 characters")
	}
	msg, err := d.translate(r, m)
	if err != nil {
		return err
	}
	return d.send(w, r, input, msg, key)
}

// maxTextBody is Cloud's limit on a text message's body, in characters.
const maxTextBody = 4096

// plainMessageID is a message id as the bridge names it: Meta's "wamid."
// prefix, which clients that keep Meta's ids put in front, is dropped.
func plainMessageID(id string) string { return strings.TrimPrefix(id, "wamid.") }

// resolveRecipient fills m.To from m.Recipient, a user id the door issued
// (or a number, as to takes it), and returns what the caller named the
// contact by, for the answer's contacts[0].input.
func (d *Door) resolveRecipient(m *cloudMessage) (string, error) {
	if m.To != "" || m.Recipient == "" {
		return m.To, nil
	}
	if rcpt, ok := d.cfg.UserIDs.Resolve(m.Recipient); ok {
		m.To = rcpt.String() // a number's digits, a LID's or a group's JID
		return m.Recipient, nil
	}
	if _, err := bridge.ParseRecipient(m.Recipient); err == nil {
		m.To = m.Recipient
		return m.Recipient, nil
	}
	return "", invalidParam("unknown_user_id", "recipient is no user id this bridge issued (nor a number)")
}

// decodeBody reads a JSON body of at most maxMessageBody bytes; a send may
// also come form-encoded (Graph takes its fields as form fields, a field
// holding an object as its JSON).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	form := strings.HasPrefix(ct, "application/x-www-form-urlencoded")
	if ct != "" && !form && !strings.HasPrefix(ct, "application/json") {
		return invalidParam("unsupported_media_type", "the body must be application/json or application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMessageBody))
	if err != nil {
		return invalidParam("body_too_large", "the body is over 256 KiB or could not be read")
	}
	if form {
		if body, err = formAsJSON(body); err != nil {
			return invalidParam("invalid_form", "the form could not be read: "+err.Error())
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return invalidParam("invalid_json", "the body is not a JSON object of this request: "+err.Error())
	}
	return nil
}

// formAsJSON is a form-encoded body as the JSON object Graph reads it as:
// a field whose value is a JSON object or array is that value, any other
// a string.
func formAsJSON(body []byte) ([]byte, error) {
	values, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	obj := make(map[string]json.RawMessage, len(values))
	for k, vs := range values {
		val := strings.TrimSpace(vs[0])
		if (strings.HasPrefix(val, "{") || strings.HasPrefix(val, "[")) && json.Valid([]byte(val)) {
			obj[k] = json.RawMessage(val)
			continue
		}
		obj[k], _ = json.Marshal(vs[0]) // a string: cannot fail
	}
	return json.Marshal(obj)
}

// send queues msg through the send use case under the request's
// Idempotency-Key (key) and answers as Graph does: the message's id, also
// when it failed at once (its failure then reaches the webhook as a failed
// status, as Cloud reports it).
func (d *Door) send(w http.ResponseWriter, r *http.Request, input string, msg apiMessage, key string) error {
	draft, err := d.draft(r, msg)
	if err != nil {
		return err
	}
	draft.IdempotencyKey = key
	out, err := d.cfg.Sending.Send(r.Context(), draft)
	if err != nil {
		return err
	}
	return d.writeSent(w, input, msg.To, out)
}

// draft is msg in the send use case's terms, its file the send's own (a
// linked one, or a copy of an upload).
func (d *Door) draft(r *http.Request, msg apiMessage) (sendqueue.Draft, error) {
	it := sendqueue.ItemDraft{Type: msg.Type, Text: msg.Text}
	if msg.Media != nil {
		var err error
		if it.File, err = d.mediaFile(r, *msg.Media); err != nil {
			return sendqueue.Draft{}, err
		}
		it.PTT = msg.Media.PTT
	}
	if l := msg.Location; l != nil {
		it.Location = &sendqueue.LocationDraft{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	if msg.Contact != nil {
		it.VCard = &msg.Contact.VCard
	}
	for _, b := range msg.Buttons {
		it.Buttons = append(it.Buttons, bridge.Button{ID: b.ID, Title: b.Title})
	}
	return sendqueue.Draft{To: msg.To, ReplyTo: msg.ReplyTo, Items: []sendqueue.ItemDraft{it}}, nil
}

// mediaFile is the file of a media message: the linked one the door
// fetched, or a copy of the upload it names, named as the message names
// it.
func (d *Door) mediaFile(r *http.Request, m apiMedia) (*spool.File, error) {
	f := m.file
	if f == nil {
		if d.cfg.Uploads == nil {
			return nil, errNoUploads
		}
		var err error
		if f, err = d.cfg.Uploads.Use(r.Context(), m.UploadID); err != nil {
			return nil, err
		}
	}
	if name := spool.CleanFileName(m.FileName); name != "" {
		f.Name = name
	}
	return f, nil
}

// errNoUploads refuses media while the bridge keeps no uploads.
var errNoUploads = bridge.Errorf(bridge.KindUnavailable, bridge.CodeUploadsUnavailable, "this bridge keeps no uploads")

// writeSent answers Graph's send answer from the use case's outcome:
// contacts[0] is the input as the caller named it, the contact's wa_id and
// its user id; each message's id is its WhatsApp id. A repeat of an
// Idempotency-Key first used through the bridge's own API answers so too.
func (d *Door) writeSent(w http.ResponseWriter, input, to string, out sendqueue.Outcome) error {
	if len(out.Messages) == 0 {
		return bridge.Internal(bridge.CodeInternal, "the send's outcome names no message", nil)
	}
	contact := sentContact{Input: input, WaID: waID(to)}
	if rcpt, err := bridge.ParseRecipient(to); err == nil {
		contact.UserID = d.cfg.UserIDs.For(rcpt)
	}
	answer := sentAnswer{MessagingProduct: "whatsapp", Contacts: []sentContact{contact}}
	for _, m := range out.Messages {
		answer.Messages = append(answer.Messages, sentMessage{ID: m.WhatsAppID, MessageStatus: "accepted"})
	}
	writeJSON(w, http.StatusOK, answer)
	return nil
}

// waID is a recipient's wa_id: a number's digits; a group or LID as given
// (the extensions of to).
func waID(to string) string {
	rcpt, err := bridge.ParseRecipient(to)
	if err != nil || rcpt.Kind != bridge.RecipientPhone {
		return to
	}
	return rcpt.ID
}

// react is a reaction: the action use case on the message it names, the
// account's own from the log or a received one from the incoming history.
func (d *Door) react(w http.ResponseWriter, r *http.Request, m cloudMessage, input, key string) error {
	if m.Reaction == nil || m.Reaction.MessageID == "" {
		return invalidParam("missing_target", "a reaction needs reaction.message_id")
	}
	emoji, err := bridge.ParseEmoji(m.Reaction.Emoji)
	if err != nil {
		return err
	}
	t, err := sendqueue.Targets{Log: d.cfg.Targets, History: d.cfg.History}.Find(r.Context(), plainMessageID(m.Reaction.MessageID), bridge.TypeReaction)
	if err != nil {
		return err
	}
	req := t.Action(bridge.TypeReaction, "", key, func(a *sendqueue.Action) { a.Emoji = emoji })
	out, err := d.cfg.Sending.Submit(r.Context(), req)
	if err != nil {
		return err
	}
	return d.writeSent(w, input, m.To, out)
}

// markRead is {"status":"read","message_id"}: a read receipt for a
// received message, in the chat the incoming history received it in.
func (d *Door) markRead(w http.ResponseWriter, r *http.Request, m cloudMessage) error {
	if m.MessageID == "" {
		return invalidParam("missing_message_id", "a read mark needs message_id")
	}
	id, err := sendqueue.ParseMessageID(m.MessageID)
	if err != nil || d.cfg.History == nil || d.cfg.Chats == nil {
		return noObject(m.MessageID) // no received message has such an id
	}
	chat, sender, found, err := d.cfg.History.Received(r.Context(), id)
	if err != nil {
		return err
	}
	if !found {
		return noObject(m.MessageID)
	}
	if err := bridge.CallerOf(r.Context()).RequireChat(chat); err != nil {
		return err // a key allowed other chats marks nothing here
	}
	if chat.Kind != bridge.RecipientGroup {
		sender = bridge.Recipient{} // in a 1:1 chat the chat is the sender
	}
	if err := d.cfg.Chats.MarkRead(r.Context(), chat, sender, id); err != nil {
		return sessionFailed(err)
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}
