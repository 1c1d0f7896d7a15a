package messaging

import (
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// MaxMessageJSON bounds the body of POST /api/messages: a full text, a full
// vCard and every mention fit with room to spare.
const MaxMessageJSON = 256 << 10

// messageRequestJSON is the body of POST /api/messages: one message. The
// pointers tell a missing field from an empty one.
type messageRequestJSON struct {
	To       string           `json:"to"`
	Type     string           `json:"type"`
	Text     string           `json:"text"`
	ReplyTo  *string          `json:"reply_to"`
	Mentions []string         `json:"mentions"`
	Media    *mediaJSON       `json:"media"`
	Location *locationJSON    `json:"location"`
	Contact  *contactJSON     `json:"contact"`
	Poll     *pollRequestJSON `json:"poll"`
	Buttons  []buttonJSON     `json:"buttons"`
	// Status is the audience and style of a status post (to is
	// status@broadcast).
	Status *statusRequestJSON `json:"status"`
}

type statusRequestJSON struct {
	Recipients      []string `json:"recipients"`
	BackgroundColor *string  `json:"background_color"`
	Font            *string  `json:"font"`
}

type buttonJSON struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type pollRequestJSON struct {
	Question        string   `json:"question"`
	Options         []string `json:"options"`
	SelectableCount *int     `json:"selectable_count"`
}

type mediaJSON struct {
	UploadID string `json:"upload_id"`
	PTT      *bool  `json:"ptt"`
	// FileName names the file on the recipient's phone instead of the
	// upload's name (the Cloud door's document.filename).
	FileName string `json:"file_name"`
}

type locationJSON struct {
	Latitude  *float64 `json:"latitude"`
	Longitude *float64 `json:"longitude"`
	Name      string   `json:"name"`
	Address   string   `json:"address"`
}

type contactJSON struct {
	VCard *string `json:"vcard"`
}

// postMessage is POST /api/messages, the JSON door: the same validation,
// queue, idempotency keys and answer as POST /send, for one message whose
// attachment was uploaded before (POST /api/uploads).
func (s *server) postMessage(w http.ResponseWriter, r *http.Request) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var body messageRequestJSON
	if err := httpkit.DecodeJSONMax(w, r, &body, MaxMessageJSON); err != nil {
		return err
	}
	d, err := body.draft()
	if err != nil {
		return err
	}
	if body.Media != nil {
		if d.Items[0].File, err = s.useUpload(r, body.Media.UploadID); err != nil {
			return err
		}
		if name := cleanFileName(body.Media.FileName); name != "" {
			d.Items[0].File.Name = name
		}
	}
	d.IdempotencyKey = key
	return answer(w)(s.sending().Send(r.Context(), d))
}

// draft reads the body into the one validation's terms; it fails only on
// what that cannot see (a media object without an upload id).
func (m messageRequestJSON) draft() (sendqueue.Draft, error) {
	it := sendqueue.ItemDraft{Type: m.Type, Text: m.Text}
	if m.Media != nil {
		if m.Media.UploadID == "" {
			return sendqueue.Draft{}, bridge.Invalid(bridge.PartFile.MissingCode(), "media needs the upload_id of a POST /api/uploads")
		}
		it.PTT = m.Media.PTT
	}
	if l := m.Location; l != nil {
		it.Location = &sendqueue.LocationDraft{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	if m.Contact != nil {
		if m.Contact.VCard == nil {
			return sendqueue.Draft{}, bridge.Invalid(bridge.PartContact.MissingCode(), "contact needs a vcard")
		}
		it.VCard = m.Contact.VCard
	}
	if p := m.Poll; p != nil {
		it.Poll = &bridge.PollDraft{Question: p.Question, Options: p.Options, Selectable: p.SelectableCount}
	}
	if m.Buttons != nil {
		it.Buttons = make([]bridge.Button, len(m.Buttons))
		for i, b := range m.Buttons {
			it.Buttons[i] = bridge.Button(b)
		}
	}
	d := sendqueue.Draft{To: m.To, ReplyTo: m.ReplyTo, Mentions: m.Mentions, Items: []sendqueue.ItemDraft{it}}
	if st := m.Status; st != nil {
		d.Status = &bridge.StatusDraft{Recipients: st.Recipients, BackgroundColor: st.BackgroundColor, Font: st.Font}
	}
	return d, nil
}

// useUpload is a file of the send's own for upload id.
func (s *server) useUpload(r *http.Request, id string) (*sendqueue.SpooledFile, error) {
	if s.Uploads == nil {
		return nil, errNoUploads
	}
	return s.Uploads.Use(r.Context(), id)
}

var errNoUploads = bridge.Errorf(bridge.KindUnavailable, bridge.CodeUploadsUnavailable, "this bridge keeps no uploads")
