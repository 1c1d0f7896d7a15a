package cloudapi

import (
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
)

// hookStatus is one status of Cloud's statuses webhook.
type hookStatus struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Timestamp   string `json:"timestamp"`
	RecipientID string `json:"recipient_id"`
	// RecipientUserID is the recipient's user id, as value.contacts[0]'s.
	RecipientUserID string      `json:"recipient_user_id"`
	Errors          []hookError `json:"errors,omitempty"`
}

type hookError struct {
	Code      int    `json:"code"`
	Title     string `json:"title"`
	Message   string `json:"message"`
	ErrorData struct {
		Details string `json:"details"`
	} `json:"error_data"`
}

// failureCodes maps a Failed message's reason to Meta's code where one
// fits; the others get the documented extension codes (13xxxx reserved by
// Meta are not reused).
var failureCodes = map[string]struct {
	code  int
	title string
}{
	bridge.FailNotOnWhatsApp:     {CodeNotOnWhatsApp, "Message undeliverable"},
	bridge.FailLoggedOut:         {CodeAccountLoggedOut, "Account logged out"},
	bridge.FailEditWindowExpired: {CodeEditWindow, "Edit window expired"},
	bridge.FailRetriesExhausted:  {CodeGeneric, "Something went wrong"},
}

// Extension codes of failed statuses with no Meta code.
const (
	CodeAccountLoggedOut = 9001 // the linked account logged out; link it again
	CodeEditWindow       = 9002 // an edit came after WhatsApp's edit window
)

// statusOf is a message.status event as Cloud's status and its
// recipient's contact; a Queued status has none.
func statusOf(ids *UserIDs, e standardEvent) (hookStatus, hookContact, bool) {
	var name string
	switch bridge.Status(e.Status) {
	case bridge.StatusSent, bridge.StatusDelivered, bridge.StatusRead, bridge.StatusFailed:
		name = strings.ToLower(e.Status)
	default:
		return hookStatus{}, hookContact{}, false
	}
	st := hookStatus{ID: e.WhatsAppID, Status: name, Timestamp: unixSeconds(e.Timestamp), RecipientID: idOf(e.Recipient)}
	var c hookContact
	if r, err := recipientOf(e.Recipient); err == nil {
		st.RecipientUserID = ids.For(r)
		if r.Kind == bridge.RecipientPhone {
			c.WaID = r.ID
		}
	}
	if st.RecipientUserID == "" {
		st.RecipientUserID = st.RecipientID // an old group's id: its own user id
	}
	c.UserID = st.RecipientUserID
	if name == "failed" {
		f, ok := failureCodes[e.Reason]
		if !ok {
			f = failureCodes[bridge.FailRetriesExhausted]
		}
		he := hookError{Code: f.code, Title: f.title, Message: f.title}
		he.ErrorData.Details = e.Reason
		st.Errors = []hookError{he}
	}
	return st, c, true
}

// recipientOf reads an event's address: a JID or the bridge's own form.
func recipientOf(s string) (bridge.Recipient, error) {
	if r, err := bridge.RecipientFromJID(s); err == nil {
		return r, nil
	}
	return bridge.ParseRecipient(s)
}

// hookMessage is one message of Cloud's messages webhook.
type hookMessage struct {
	From       string        `json:"from"`
	FromUserID string        `json:"from_user_id,omitempty"`
	GroupID    string        `json:"group_id,omitempty"`
	ID         string        `json:"id"`
	Timestamp  string        `json:"timestamp"`
	Type       string        `json:"type"`
	Context    *hookContext  `json:"context,omitempty"`
	Text       *textBody     `json:"text,omitempty"`
	Image      *hookMedia    `json:"image,omitempty"`
	Video      *hookMedia    `json:"video,omitempty"`
	Audio      *hookMedia    `json:"audio,omitempty"`
	Document   *hookMedia    `json:"document,omitempty"`
	Sticker    *hookMedia    `json:"sticker,omitempty"`
	Location   *hookLocation `json:"location,omitempty"`
	Contacts   []hookCard    `json:"contacts,omitempty"`
	Reaction   *hookReaction `json:"reaction,omitempty"`
	// Interactive is a tap on a reply button or a list row picked.
	Interactive *hookInteractive `json:"interactive,omitempty"`
}

// hookInteractive is Cloud's shape of an answer to an interactive message:
// type button_reply or list_reply, and the one of those two it names.
type hookInteractive struct {
	Type        string      `json:"type"`
	ButtonReply *hookChoice `json:"button_reply,omitempty"`
	ListReply   *hookChoice `json:"list_reply,omitempty"`
}

type hookChoice struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type textBody struct {
	Body string `json:"body"`
}

type hookContext struct {
	// From is who sent the message answered: known for a tap (the
	// account's own message offered the buttons), as Meta gives it.
	From string `json:"from,omitempty"`
	ID   string `json:"id"`
}

type hookMedia struct {
	ID       string `json:"id"`
	MimeType string `json:"mime_type"`
	SHA256   string `json:"sha256,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
	Voice    bool   `json:"voice,omitempty"`
}

type hookLocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

type hookCard struct {
	Name struct {
		FormattedName string `json:"formatted_name"`
	} `json:"name"`
	// VCard (an extension) is the card as the sender sent it.
	VCard string `json:"vcard,omitempty"`
}

type hookReaction struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// messageOf is a message.upsert or message.reaction event as Cloud's
// contact and message. Every sender has a user id (UserIDs: from the side
// the account knew it by first), as contacts[0].user_id and the
// message's from_user_id; a sender whose number is hidden has no wa_id,
// and its from is the LID JID, which a reply's to takes (as does its user
// id as recipient).
func messageOf(ids *UserIDs, e standardEvent) (hookContact, hookMessage) {
	var c hookContact
	c.Profile.Name = e.PushName
	m := hookMessage{ID: e.WhatsAppID, Timestamp: unixSeconds(e.Timestamp), Type: e.Type, From: idOf(e.From)}
	sender, err := recipientOf(e.From)
	if e.FromPhone != nil {
		c.WaID = idOf(*e.FromPhone)
		sender, err = recipientOf(*e.FromPhone)
	} else if e.FromLID != nil {
		sender, err = recipientOf(*e.FromLID)
	}
	if err == nil {
		c.UserID = ids.For(sender)
	}
	if c.UserID == "" {
		c.UserID = m.From
	}
	m.FromUserID = c.UserID
	if strings.HasSuffix(e.Chat, "@g.us") {
		m.GroupID = e.Chat
	}
	if e.Quoted != "" {
		m.Context = &hookContext{ID: e.Quoted}
	}
	fillContent(&m, e)
	return c, m
}

// fillContent puts the event's content in the field of its type.
func fillContent(m *hookMessage, e standardEvent) {
	if e.Media != nil {
		med := &hookMedia{ID: e.Media.ID, MimeType: e.Media.MimeType, SHA256: e.Media.SHA256, Caption: e.Text,
			Filename: e.Media.FileName, Voice: e.Media.PTT}
		switch e.Type {
		case "image":
			m.Image = med
		case "video":
			m.Video = med
		case "audio":
			m.Audio = med
		case "sticker":
			m.Sticker = med
		default:
			m.Type, m.Document = "document", med
		}
		return
	}
	switch e.Type {
	case bridge.IncomingReaction:
		emoji := ""
		if e.Emoji != nil {
			emoji = *e.Emoji
		}
		m.Reaction = &hookReaction{MessageID: e.TargetID, Emoji: emoji}
	case bridge.IncomingButtonReply:
		m.Type = "interactive"
		m.Interactive = &hookInteractive{Type: e.Type, ButtonReply: &hookChoice{ID: e.ReplyID, Title: e.Text}}
	case bridge.IncomingListReply:
		m.Type = "interactive"
		m.Interactive = &hookInteractive{Type: e.Type, ListReply: &hookChoice{ID: e.ReplyID, Title: e.Text}}
	case "location":
		m.Location = e.Location
	case "contact":
		m.Type = "contacts"
		for _, card := range e.Contacts {
			var hc hookCard
			hc.Name.FormattedName, hc.VCard = card.DisplayName, card.VCard
			m.Contacts = append(m.Contacts, hc)
		}
	default:
		m.Type, m.Text = "text", &textBody{Body: e.Text}
	}
}
