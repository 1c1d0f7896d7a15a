package dashboard

import (
	"net/http"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/msgbridge/msgbridge/bridge"
)

var errNoQR = bridge.Errorf(bridge.KindNotFound, bridge.CodeNoQR, "No QR code to show.")

// qrImageSize is the PNG's width and height in pixels: large enough for a
// phone camera at arm's length, small enough to fit a phone screen.
const qrImageSize = 288

// qrImage renders the current QR code of the link attempt this browser may
// see as a PNG. Its URL carries a version only so that the browser fetches
// each rotation; the image is always the current code.
func (d *Dashboard) qrImage(w http.ResponseWriter, _ *http.Request, ws webSession) error {
	qr := d.opts.Session.CurrentQR()
	if qr.Code == "" || qr.Attempt != ws.qrAttempt {
		return errNoQR
	}
	png, err := qrcode.Encode(qr.Code, qrcode.Medium, qrImageSize)
	if err != nil {
		return bridge.Internal(bridge.CodeInternal, "Could not render the QR code.", err)
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(png)
	return nil
}
