package dashboard

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// eventTick refreshes the heartbeat age and keeps proxies from closing an
// idle stream.
const eventTick = 5 * time.Second

// eventWriteTimeout bounds writing one event: a browser that stops reading
// ends its stream instead of holding a handler.
const eventWriteTimeout = 10 * time.Second

// stateEvent is what the page shows; one is sent on every change.
type stateEvent struct {
	State     string `json:"state"`
	Reason    string `json:"reason"`
	Connected bool   `json:"connected"`
	Account   string `json:"account"`
	PushName  string `json:"push_name"`
	// HeartbeatAge is seconds since the link was last seen alive; -1: never.
	HeartbeatAge int `json:"heartbeat_age"`
	// RestrictedUntil is when WhatsApp's restriction of sending ends (RFC
	// 3339); empty when sending is not restricted.
	RestrictedUntil string `json:"restricted_until,omitempty"`
	// QR is the URL of the current QR image, versioned per rotation; empty
	// when there is none or this browser may not see it.
	QR string `json:"qr"`
	// QRSince is when the bridge received that code (ms since the epoch),
	// so the page can tell how long a rotation took to reach the screen.
	QRSince int64 `json:"qr_since"`
}

// trafficEvent tells the page that messages changed (one was accepted,
// sent, received, or moved to Delivered, Read or Failed): it re-reads what
// it shows. At is when the bridge sent the event (ms since the epoch), for
// the figure of a receipt's way to the page.
type trafficEvent struct {
	At int64 `json:"at"`
}

// events streams the state, and a traffic event on every change of the
// messages, as server-sent events until the browser leaves, signs out or
// the server stops.
// It answers no error: once the stream has begun, its end is the answer.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request, ws webSession) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no") // nginx would otherwise hold events back
	changes, unsubscribe := d.opts.Session.Subscribe()
	defer unsubscribe()
	traffic, stopTraffic := d.traffic.Subscribe()
	defer stopTraffic()
	tick := time.NewTicker(eventTick)
	defer tick.Stop()

	qr := qrVersions{}
	stateDue := true
	for {
		wake := d.streamsWake() // before reading, so no wake-up is missed
		cur, ok := d.sessions.get(r)
		if !ok || cur.id != ws.id {
			return nil // signed out or expired
		}
		if stateDue && writeEvent(w, "state", d.stateFor(cur, &qr)) != nil {
			return nil
		}
		stateDue = true
		select {
		case <-changes:
		case <-wake:
		case <-tick.C:
		case <-traffic:
			if writeEvent(w, "traffic", trafficEvent{At: d.opts.Now().UnixMilli()}) != nil {
				return nil
			}
			stateDue = false
		case <-r.Context().Done():
			return nil
		case <-d.done:
			return nil
		}
	}
}

// qrVersions numbers the QR codes one stream showed, so that each rotation
// has its own image URL.
type qrVersions struct {
	last    string
	version int
}

// stateFor is the state event for browser session cur, with the QR code
// when it may see it.
func (d *Dashboard) stateFor(cur webSession, v *qrVersions) stateEvent {
	ev := d.snapshot()
	if qr := d.opts.Session.CurrentQR(); qr.Code != "" && qr.Attempt == cur.qrAttempt {
		if qr.Code != v.last {
			v.last, v.version = qr.Code, v.version+1
		}
		ev.QR, ev.QRSince = fmt.Sprintf("/dashboard/qr.png?v=%d", v.version), qr.Since.UnixMilli()
	}
	return ev
}

// writeEvent sends one server-sent event and flushes it.
func writeEvent(w http.ResponseWriter, name string, v any) error {
	rc := http.NewResponseController(w)
	data, _ := json.Marshal(v) // plain structs always encode
	_ = rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout))
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return err
	}
	return rc.Flush()
}

// snapshot is the page's view of the session now, without the QR code.
func (d *Dashboard) snapshot() stateEvent {
	st := d.opts.Session.Status()
	age := -1
	if !st.LastHeartbeat.IsZero() {
		age = int(math.Max(0, d.opts.Now().Sub(st.LastHeartbeat).Seconds()))
	}
	ev := stateEvent{
		State: string(st.State), Reason: string(st.Reason), Connected: st.Connected(),
		Account: st.Account, PushName: st.PushName, HeartbeatAge: age,
	}
	if st.RestrictedUntil.After(d.opts.Now()) {
		ev.RestrictedUntil = bridge.FormatTime(st.RestrictedUntil)
	}
	return ev
}
