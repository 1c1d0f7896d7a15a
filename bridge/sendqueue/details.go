package sendqueue

import (
	"encoding/json"
	"fmt"

	"github.com/msgbridge/msgbridge/bridge"
)

// details is the messages table's details column: what only some types
// carry, as JSON ('{}' when none). Recipients are stored as JIDs, the
// store's one address form.
type details struct {
	Mentions []string        `json:"mentions,omitempty"`
	PTT      bool            `json:"ptt,omitempty"`
	Location *locationDetail `json:"location,omitempty"`
	Contact  *contactDetail  `json:"contact,omitempty"`
	// TargetSender is who sent the message an action acts on, when it was
	// received (a JID); empty for the account's own.
	TargetSender string `json:"target_sender,omitempty"`
	// Poll is a poll's question and options: a vote names its options by
	// the SHA-256 of their names, so they are what reads a vote.
	Poll *pollDetail `json:"poll,omitempty"`
	// Buttons are the reply buttons under a text.
	Buttons []buttonDetail `json:"buttons,omitempty"`
	// Status is a status post's audience and style.
	Status *statusDetail `json:"status,omitempty"`
}

type statusDetail struct {
	Recipients     []string `json:"recipients"` // JIDs
	BackgroundARGB uint32   `json:"background_argb,omitempty"`
	Font           *int     `json:"font,omitempty"`
}

type buttonDetail struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type pollDetail struct {
	Question   string   `json:"question"`
	Options    []string `json:"options"`
	Selectable int      `json:"selectable_count"`
}

type locationDetail struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

type contactDetail struct {
	DisplayName string `json:"display_name"`
	VCard       string `json:"vcard"`
}

// detailsOf is what it stores besides its type, text, file and reply.
func detailsOf(it Item) details {
	d := details{PTT: it.PTT}
	for _, r := range it.Mentions {
		d.Mentions = append(d.Mentions, r.JID())
	}
	if l := it.Location; l != nil {
		d.Location = &locationDetail{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	if c := it.Contact; c != nil {
		d.Contact = &contactDetail{DisplayName: c.DisplayName, VCard: c.VCard}
	}
	if p := it.Poll; p != nil {
		d.Poll = &pollDetail{Question: p.Question, Options: p.Options, Selectable: p.Selectable}
	}
	for _, b := range it.Buttons {
		d.Buttons = append(d.Buttons, buttonDetail(b))
	}
	if a := it.Action; a != nil {
		d.TargetSender = a.TargetSender.JID()
	}
	if st := it.Status; st != nil {
		d.Status = &statusDetail{BackgroundARGB: st.BackgroundARGB, Font: st.Font}
		for _, r := range st.Recipients {
			d.Status.Recipients = append(d.Status.Recipients, r.JID())
		}
	}
	return d
}

// encode is the column's value; a plain struct always marshals.
func (d details) encode() string {
	b, _ := json.Marshal(d)
	return string(b)
}

// decodeDetails reads the column; '{}' and ” are no details.
func decodeDetails(raw string) (details, error) {
	var d details
	if raw == "" {
		return d, nil
	}
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return d, fmt.Errorf("stored details: %w", err)
	}
	for _, jid := range d.Mentions {
		if _, err := bridge.RecipientFromJID(jid); err != nil {
			return d, fmt.Errorf("stored mention %q: %w", jid, err)
		}
	}
	if d.Status != nil {
		for _, jid := range d.Status.Recipients {
			if _, err := bridge.RecipientFromJID(jid); err != nil {
				return d, fmt.Errorf("stored status recipient %q: %w", jid, err)
			}
		}
	}
	return d, nil
}

func (d details) mentions() []bridge.Recipient {
	if len(d.Mentions) == 0 {
		return nil
	}
	out := make([]bridge.Recipient, 0, len(d.Mentions))
	for _, jid := range d.Mentions {
		r, _ := bridge.RecipientFromJID(jid) // checked by decodeDetails
		out = append(out, r)
	}
	return out
}

func (d details) location() *bridge.Location {
	if d.Location == nil {
		return nil
	}
	l := d.Location
	return &bridge.Location{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
}

func (d details) contact() *bridge.ContactCard {
	if d.Contact == nil {
		return nil
	}
	return &bridge.ContactCard{DisplayName: d.Contact.DisplayName, VCard: d.Contact.VCard}
}

func (d details) poll() *bridge.Poll {
	if d.Poll == nil {
		return nil
	}
	return &bridge.Poll{Question: d.Poll.Question, Options: d.Poll.Options, Selectable: d.Poll.Selectable}
}

func (d details) buttons() []bridge.Button {
	var out []bridge.Button
	for _, b := range d.Buttons {
		out = append(out, bridge.Button(b))
	}
	return out
}

func (d details) status() *bridge.StatusPost {
	if d.Status == nil {
		return nil
	}
	p := &bridge.StatusPost{BackgroundARGB: d.Status.BackgroundARGB, Font: d.Status.Font}
	for _, jid := range d.Status.Recipients {
		r, _ := bridge.RecipientFromJID(jid) // checked by decodeDetails
		p.Recipients = append(p.Recipients, r)
	}
	return p
}
