package main

import (
	"context"
	"errors"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
	"github.com/msgbridge/msgbridge/contract"
)

// sessionPort is the session as bridge.Session, for the HTTP API and the
// dashboard, until the whatsapp package speaks the domain's types itself.
type sessionPort struct{ *whatsapp.Manager }

var _ bridge.Session = sessionPort{}

func (p sessionPort) Status() bridge.SessionStatus {
	st := p.Manager.Status()
	return bridge.SessionStatus{
		State: contract.SessionState(st.State), Reason: contract.Reason(st.Reason), Account: st.Account,
		PushName: st.PushName, ConnectedSince: st.ConnectedSince, LastHeartbeat: st.LastHeartbeat,
	}
}

func (p sessionPort) CurrentQR() bridge.LinkQR {
	qr := p.Manager.CurrentQR()
	return bridge.LinkQR{Code: qr.Code, Since: qr.Since, Attempt: qr.Attempt}
}

func (p sessionPort) QR(ctx context.Context) (string, error) {
	qr, err := p.Manager.QR(ctx)
	return qr, portError(err)
}

func (p sessionPort) PairingCode(ctx context.Context, phone string) (string, error) {
	code, err := p.Manager.PairingCode(ctx, phone)
	return code, portError(err)
}

func (p sessionPort) Groups(ctx context.Context) ([]bridge.Group, error) {
	groups, err := p.Manager.Groups(ctx)
	out := make([]bridge.Group, len(groups))
	for i, g := range groups {
		out[i] = bridge.Group(g)
	}
	return out, portError(err)
}

func (p sessionPort) Logout(ctx context.Context) error { return portError(p.Manager.Logout(ctx)) }

func (p sessionPort) Send(ctx context.Context, out bridge.Outgoing) error {
	return portError(p.Manager.Send(ctx, whatsapp.Outgoing{
		ID: out.ID, Recipient: out.Recipient.JID(), Kind: string(out.Type), Text: out.Text,
		FilePath: out.FilePath, FileName: out.FileName, MimeType: out.MimeType,
	}))
}

func portError(err error) error {
	switch {
	case errors.Is(err, whatsapp.ErrLinked):
		return bridge.ErrLinked
	case errors.Is(err, whatsapp.ErrNotLinked):
		return bridge.ErrNotLinked
	}
	return err
}
