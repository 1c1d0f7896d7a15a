package httpapi

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// Approvals are the sends held for a person's approval (*sendqueue.Queue):
// those of keys with approval.
type Approvals interface {
	Awaiting(ctx context.Context) ([]sendqueue.Held, error)
	Approve(ctx context.Context, id string) (bridge.Message, error)
	Reject(ctx context.Context, id string) (bridge.Message, error)
}

// awaitingJSON is a message awaiting approval: its log entry and what it
// would send, so that a person decides on what they see.
type awaitingJSON struct {
	messageJSON
	Text string `json:"text"`
}

func (s *server) approvalRoutes(r *mux.Router, prefix string, admin func(HandlerFunc) http.Handler,
	audited func(audit.Action, HandlerFunc) http.Handler) {
	r.Handle(prefix+"/approvals", admin(s.listApprovals)).Methods(get)
	r.Handle(prefix+"/approvals/{id}/approve", audited(audit.ActionApprovalApprove, s.decideApproval(s.Approvals.Approve))).Methods(post)
	r.Handle(prefix+"/approvals/{id}/reject", audited(audit.ActionApprovalReject, s.decideApproval(s.Approvals.Reject))).Methods(post)
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
		out.Messages[i] = awaitingJSON{messageJSON: toMessageJSON(m.Message), Text: m.Text}
	}
	return WriteJSON(w, http.StatusOK, out)
}

// decideApproval answers the message after decide (approve or reject).
func (s *server) decideApproval(decide func(context.Context, string) (bridge.Message, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := decide(r.Context(), mux.Vars(r)["id"])
		if err != nil {
			return err
		}
		return WriteJSON(w, http.StatusOK, toMessageJSON(m))
	}
}
