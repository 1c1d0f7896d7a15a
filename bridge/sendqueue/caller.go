package sendqueue

import (
	"context"

	"github.com/msgbridge/msgbridge/bridge"
)

// authorize checks the request against who sends it (the caller its
// context carries, put there by the door that checked the key): the send
// scope, the key's chats, its hourly budget. Every door ends in Submit, so
// a key can send through none of them what it may not. A status post's
// audience is chats too: a key allowed some chats may not post one.
func (s Sending) authorize(ctx context.Context, req Request) error {
	c := bridge.CallerOf(ctx)
	if err := c.Require(bridge.ScopeSend); err != nil {
		return err
	}
	if err := c.RequireChat(req.Recipient); err != nil {
		return err
	}
	if s.Budget == nil || c.Budget == 0 {
		return nil
	}
	if wait, err := s.Budget.Spend(c, len(req.Items)); err != nil {
		return bridge.OverBudget(wait)
	}
	return nil
}

// held is req as its caller may send it: held for approval when its key
// requires one.
func held(ctx context.Context, req Request) Request {
	req.AwaitApproval = req.AwaitApproval || bridge.CallerOf(ctx).Approval
	return req
}
