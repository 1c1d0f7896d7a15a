package dashboard

import (
	"net/http"

	qrcode "github.com/skip2/go-qrcode"
)

// qrImageSize is the PNG's width and height in pixels: large enough for a
// phone camera at arm's length, small enough to fit a phone screen.
const qrImageSize = 288

// qrImage renders the running link attempt's current QR code as a PNG. Its
// URL carries a version only so that the browser fetches each rotation; the
// image is always the current code.
func (d *Dashboard) qrImage(w http.ResponseWriter, _ *http.Request, ws webSession) {
	qr, _ := d.opts.Session.CurrentQR()
	if !ws.qrShown || qr == "" {
		writeJSONError(w, http.StatusNotFound, "no QR code to show")
		return
	}
	png, err := qrcode.Encode(qr, qrcode.Medium, qrImageSize)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "could not render the QR code")
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(png)
}
