package guard

import (
	"io"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Limits bound what a client can hold of the server while it sends a
// body. They apply to every request with a body, before routing.
type Limits struct {
	// BodyReadGap is the longest wait for the next bytes of a body.
	BodyReadGap time.Duration
	// BodyDeadline bounds reading one whole body.
	BodyDeadline time.Duration
	// MaxUploads is how many bodies are read at once from clients without
	// a valid credential in a header; more are answered 503 with
	// Retry-After. Clients with one are not held back by strangers.
	MaxUploads int
}

// Defaults of the limits.
const (
	defaultBodyReadGap = 15 * time.Second
	defaultMaxUploads  = 32
	// An honest upload of the largest body at minUploadRate ends in time.
	minUploadRate   = 1 << 20 // bytes per second
	bodyDeadlineMin = 30 * time.Second
	// uploadsRetryAfter is the Retry-After of too_many_uploads, seconds.
	uploadsRetryAfter = "5"
)

// DefaultLimits are the limits for bodies of at most largest bytes: the
// whole-body deadline grows with it.
func DefaultLimits(largest int64) Limits {
	return Limits{
		BodyReadGap:  defaultBodyReadGap,
		BodyDeadline: bodyDeadlineMin + time.Duration(largest/minUploadRate)*time.Second,
		MaxUploads:   defaultMaxUploads,
	}
}

// ErrTooManyUploads answers a body beyond Limits.MaxUploads.
var ErrTooManyUploads = bridge.Errorf(bridge.KindUnavailable, "too_many_uploads",
	"too many uploads at once; retry after the Retry-After seconds")

// Bodies applies limits to the bodies next reads: a request with a body
// takes an upload slot (unless trusted, which checks a header credential
// without counting it) and reads its body under deadlines. refuse writes
// the error of a request turned away.
func Bodies(limits Limits, trusted func(*http.Request) bool, refuse func(http.ResponseWriter, error), next http.Handler) http.Handler {
	slots := make(chan struct{}, limits.MaxUploads)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if !trusted(r) {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			default:
				w.Header().Set("Retry-After", uploadsRetryAfter)
				w.Header().Set("Connection", "close") // the body stays unread
				refuse(w, ErrTooManyUploads)
				return
			}
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: http.NewResponseController(w),
			gap: limits.BodyReadGap, end: time.Now().Add(limits.BodyDeadline)}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody sets the connection's read deadline before each read: the
// gap from now, but never past the whole body's end. At the body's end the
// deadline is cleared, since net/http then reads the connection in the
// background to notice a client that goes away, and a deadline there would
// cancel a handler still at work. After any other error it is set in the
// past, so that nothing waits on the connection again.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	gap  time.Duration
	end  time.Time
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if !b.done {
		next := time.Now().Add(b.gap)
		if next.After(b.end) {
			next = b.end
		}
		_ = b.rc.SetReadDeadline(next)
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if err == io.EOF { //nolint:errorlint // Read returns io.EOF itself
			_ = b.rc.SetReadDeadline(time.Time{})
		} else {
			_ = b.rc.SetReadDeadline(time.Now())
		}
	}
	return n, err
}
