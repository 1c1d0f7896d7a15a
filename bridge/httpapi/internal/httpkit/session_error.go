package httpkit

import (
	"context"
	"errors"

	"github.com/msgbridge/msgbridge/bridge"
)

// SessionError is err of a session operation as the bridge's HTTP surface
// answers it: a *bridge.Error as it is (409 already_linked, 503
// not_linked, …), a deadline as 504 timeout, anything else as WhatsApp's
// refusal or failure (502 whatsapp_error).
func SessionError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*bridge.Error](err); ok {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &bridge.Error{Kind: bridge.KindTimeout, Code: bridge.CodeTimeout, Message: "WhatsApp did not answer in time", Err: err}
	}
	return &bridge.Error{Kind: bridge.KindUpstream, Code: bridge.CodeWhatsAppError,
		Message: "WhatsApp refused or failed the request: " + err.Error(), Err: err}
}
