package whatsapp

import (
	"context"
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"

	"github.com/msgbridge/msgbridge/bridge"
)

// SetPushName changes the account's push name. WhatsApp keeps it as a
// setting in the account's app state (the critical_block collection),
// written with the keys the phone shared: every device of the account
// reads it from there, and contacts see it with the account's messages.
// Without the keys it is refused with bridge.ErrAppStateUnavailable.
func (m *Session) SetPushName(ctx context.Context, name string) error {
	cli, err := m.appStateWritable(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, m.sendTimeout(), errSendTimeout)
	defer cancel()
	// whatsmeow reads the patch back before SendAppState returns, which
	// sets the device's own push name (sent with its presence) and reports
	// events.PushNameSetting later from its own goroutine; the status shows
	// the name at once, so a GET right after the change reads it.
	if err := cli.SendAppState(ctx, appstate.BuildSettingPushName(name)); err != nil {
		return sendFailed(ctx, fmt.Errorf("write push name: %w", err))
	}
	m.showPushName(name)
	return nil
}

// appStateWritable is the linked client once the phone shared the app
// state keys it writes with; bridge.ErrAppStateUnavailable before.
func (m *Session) appStateWritable(ctx context.Context) (*whatsmeow.Client, error) {
	cli, err := m.readyClient()
	if err != nil {
		return nil, err
	}
	if id, err := cli.Store.AppStateKeys.GetLatestAppStateSyncKeyID(ctx); err != nil || id == nil {
		return nil, bridge.ErrAppStateUnavailable
	}
	return cli, nil
}
