package messaging

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// The label endpoints (API key; WhatsApp Business). The list is read from
// the bridge (what WhatsApp's app state reported); every change is written
// into the account's app state: a paced (GROUP_ACTION_RATE), audited
// action that takes an Idempotency-Key, as group actions are.

// Labels are the account's labels (*whatsapp.LabelBook).
type Labels interface {
	Labels(ctx context.Context) ([]bridge.Label, error)
	CreateLabel(ctx context.Context, name string, color int) (bridge.Label, error)
	UpdateLabel(ctx context.Context, id string, name *string, color *int) (bridge.Label, error)
	DeleteLabel(ctx context.Context, id string) error
	LabelChat(ctx context.Context, id string, chat bridge.Recipient, labeled bool) error
	LabelMessage(ctx context.Context, id string, chat bridge.Recipient, messageID string, labeled bool) error
}

func (s *server) labelRoutes(r *mux.Router) {
	if s.Labels == nil {
		return
	}
	httpkit.Mount(r, []httpkit.Route{
		{Path: "/api/labels", Method: httpkit.Get, H: s.listLabels},
		{Path: "/api/labels", Method: httpkit.Post, H: s.createLabel},
		{Path: "/api/labels/{id}", Method: httpkit.Patch, H: s.updateLabel},
		{Path: "/api/labels/{id}", Method: httpkit.Del, H: s.deleteLabel},
		{Path: "/api/labels/{id}/chats/{jid}", Method: http.MethodPut, H: s.labelChat(true)},
		{Path: "/api/labels/{id}/chats/{jid}", Method: httpkit.Del, H: s.labelChat(false)},
		{Path: "/api/labels/{id}/chats/{jid}/messages/{message_id}", Method: http.MethodPut, H: s.labelMessage(true)},
		{Path: "/api/labels/{id}/chats/{jid}/messages/{message_id}", Method: httpkit.Del, H: s.labelMessage(false)},
	}, s.keyed)
}

type labelJSON struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Color int      `json:"color"`
	Chats []string `json:"chats"`
}

func labelOf(l bridge.Label) labelJSON {
	chats := make([]string, 0, len(l.Chats))
	for _, c := range l.Chats {
		chats = append(chats, chatName(c))
	}
	return labelJSON{ID: l.ID, Name: l.Name, Color: l.Color, Chats: chats}
}

// chatName names a chat as the rest of the API does: a phone number's
// digits, a group's or a LID's JID.
func chatName(jid string) string {
	if r, err := bridge.RecipientFromJID(jid); err == nil {
		return r.String()
	}
	return jid
}

// listLabels is GET /api/labels.
func (s *server) listLabels(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r, "apiKey"); err != nil {
		return err
	}
	labels, err := s.Labels.Labels(r.Context())
	if err != nil {
		return err
	}
	out := make([]labelJSON, 0, len(labels))
	for _, l := range labels {
		out = append(out, labelOf(l))
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{"labels": out})
}

type labelBody struct {
	Name  *string `json:"name"`
	Color *int    `json:"color"`
}

// parse checks the fields present; create needs a name.
func (b labelBody) parse(create bool) (*string, *int, error) {
	if create && b.Name == nil {
		return nil, nil, bridge.Invalid(bridge.CodeMissingName, `the body needs "name", the label's name`)
	}
	if !create && b.Name == nil && b.Color == nil {
		return nil, nil, bridge.Invalid(bridge.CodeMissingChange, `the body needs "name", "color" or both`)
	}
	var name *string
	var color *int
	if b.Name != nil {
		n, err := bridge.ParseLabelName(*b.Name)
		if err != nil {
			return nil, nil, err
		}
		name = &n
	}
	if b.Color != nil {
		c, err := bridge.ParseLabelColor(*b.Color)
		if err != nil {
			return nil, nil, err
		}
		color = &c
	}
	return name, color, nil
}

// createLabel is POST /api/labels {name, color?}: 201 {label}.
func (s *server) createLabel(w http.ResponseWriter, r *http.Request) error {
	var body labelBody
	raw, err := readGroupJSON(w, r, &body)
	if err != nil {
		return err
	}
	name, color, err := body.parse(true)
	if err != nil {
		return err
	}
	if color == nil {
		color = new(int)
	}
	return s.doGroupAction(w, r, raw, groupAction{audit: audit.ActionLabelCreate, detail: *name, cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			l, err := s.Labels.CreateLabel(ctx, *name, *color)
			return http.StatusCreated, map[string]any{"label": labelOf(l)}, err
		}})
}

// updateLabel is PATCH /api/labels/{id} {name?, color?}: 200 {label}.
func (s *server) updateLabel(w http.ResponseWriter, r *http.Request) error {
	id, err := bridge.ParseLabelID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	var body labelBody
	raw, err := readGroupJSON(w, r, &body)
	if err != nil {
		return err
	}
	name, color, err := body.parse(false)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, raw, groupAction{audit: audit.ActionLabelUpdate, detail: id, cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			l, err := s.Labels.UpdateLabel(ctx, id, name, color)
			return http.StatusOK, map[string]any{"label": labelOf(l)}, err
		}})
}

// deleteLabel is DELETE /api/labels/{id}: 204.
func (s *server) deleteLabel(w http.ResponseWriter, r *http.Request) error {
	id, err := bridge.ParseLabelID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, nil, groupAction{audit: audit.ActionLabelDelete, detail: id, cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			return http.StatusNoContent, nil, s.Labels.DeleteLabel(ctx, id)
		}})
}

// labelTarget reads the {id} and {jid} of a label's chat path.
func labelTarget(r *http.Request) (string, bridge.Recipient, error) {
	id, err := bridge.ParseLabelID(mux.Vars(r)["id"])
	if err != nil {
		return "", bridge.Recipient{}, err
	}
	chat, err := parseChat(mux.Vars(r)["jid"])
	if err != nil {
		return "", bridge.Recipient{}, err
	}
	return id, chat, nil
}

// labelChat is PUT (labeled) or DELETE /api/labels/{id}/chats/{jid}: 204.
func (s *server) labelChat(labeled bool) httpkit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, chat, err := labelTarget(r)
		if err != nil {
			return err
		}
		return s.doGroupAction(w, r, nil, groupAction{audit: audit.ActionLabelApply, detail: labelDetail(id, chat.JID(), labeled), cost: 1,
			run: func(ctx context.Context) (int, any, error) {
				return http.StatusNoContent, nil, s.Labels.LabelChat(ctx, id, chat, labeled)
			}})
	}
}

// labelMessage is PUT (labeled) or DELETE
// /api/labels/{id}/chats/{jid}/messages/{message_id}: 204.
func (s *server) labelMessage(labeled bool) httpkit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, chat, err := labelTarget(r)
		if err != nil {
			return err
		}
		msg := mux.Vars(r)["message_id"]
		if !bridge.ValidWhatsAppID(msg) {
			return bridge.Invalid(bridge.CodeInvalidMessageID, "message_id must be a WhatsApp message id (letters and digits)")
		}
		return s.doGroupAction(w, r, nil, groupAction{audit: audit.ActionLabelApply, detail: labelDetail(id, chat.JID()+" "+msg, labeled), cost: 1,
			run: func(ctx context.Context) (int, any, error) {
				return http.StatusNoContent, nil, s.Labels.LabelMessage(ctx, id, chat, msg, labeled)
			}})
	}
}

func labelDetail(id, target string, labeled bool) string {
	if labeled {
		return id + " on " + target
	}
	return id + " off " + target
}
