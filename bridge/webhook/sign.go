package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"time"
)

// Standard Webhooks headers.
const (
	headerID        = "webhook-id"
	headerTimestamp = "webhook-timestamp"
	headerSignature = "webhook-signature"
)

// sign is the Standard Webhooks v1 signature of one delivery: HMAC-SHA256
// with the decoded whsec_ key over "id.timestamp.body", base64.
func sign(key []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// setHeaders sets the delivery headers. The timestamp is the attempt's, not
// the event's: receivers reject old timestamps (replay protection), and a
// retry hours later is still genuine. No key: no signature header.
func setHeaders(h http.Header, key []byte, id string, at time.Time, body []byte) {
	ts := at.Unix()
	h.Set("Content-Type", "application/json")
	h.Set(headerID, id)
	h.Set(headerTimestamp, strconv.FormatInt(ts, 10))
	if len(key) > 0 {
		h.Set(headerSignature, sign(key, id, ts, body))
	}
}
