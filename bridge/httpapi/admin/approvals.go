package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// Approvals are the sends held for a person's approval (*sendqueue.Queue):
// those of keys with approval.
type Approvals interface {
	Awaiting(ctx context.Context) ([]sendqueue.Held, error)
	Approve(ctx context.Context, id string) (bridge.Message, error)
	Reject(ctx context.Context, id string) (bridge.Message, error)
}

// decidedJSON is a message of the log as GET /api/messages/{id} shows it
// (the messaging API's entry: the admin API keeps its own copy).
type decidedJSON struct {
	ID         string    `json:"id"`
	WhatsAppID string    `json:"whatsapp_id"`
	Recipient  string    `json:"recipient"`
	Type       string    `json:"type"`
	Status     string    `json:"status"`
	RetryCount int       `json:"retry_count"`
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"last_error"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

func toDecidedJSON(m bridge.Message) decidedJSON {
	return decidedJSON{ID: m.ID, WhatsAppID: m.WhatsAppID, Recipient: m.Recipient.JID(), Type: string(m.Type),
		Status: string(m.Status), RetryCount: m.RetryCount, Attempts: m.Attempts, LastError: m.LastError,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

// awaitingJSON is a message awaiting approval: its log entry and what it
// would send, so that a person decides on what they see.
type awaitingJSON struct {
	decidedJSON
	Text string `json:"text"`
}

func (s *server) approvalRoutes(r *mux.Router, prefix string, g httpkit.Guarded) {
	r.Handle(prefix+"/approvals", g.Admin(s.listApprovals)).Methods(httpkit.Get)
	r.Handle(prefix+"/approvals/{id}/approve", g.Audited(audit.ActionApprovalApprove, s.decideApproval(s.Approvals.Approve))).Methods(httpkit.Post)
	r.Handle(prefix+"/approvals/{id}/reject", g.Audited(audit.ActionApprovalReject, s.decideApproval(s.Approvals.Reject))).Methods(httpkit.Post)
}

func (s *server) listApprovals(w http.ResponseWriter, r *http.Request) error {
	msgs, err := s.Approvals.Awaiting(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Messages []awaitingJSON `json:"messages"`
	}{Messages: make([]awaitingJSON, len(msgs))}
	for i, m := range msgs {
		out.Messages[i] = awaitingJSON{decidedJSON: toDecidedJSON(m.Message), Text: m.Text}
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

// decideApproval answers the message after decide (approve or reject).
func (s *server) decideApproval(decide func(context.Context, string) (bridge.Message, error)) httpkit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := decide(r.Context(), mux.Vars(r)["id"])
		if err != nil {
			return err
		}
		return httpkit.WriteJSON(w, http.StatusOK, toDecidedJSON(m))
	}
}
