package httpapi

import (
	"io"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// ServerLimits bound what a client can hold of the server while it sends a
// body. They apply to every request with a body, before routing.
type ServerLimits struct {
	// BodyReadGap is the longest wait for the next bytes of a body.
	BodyReadGap time.Duration
	// BodyDeadline bounds reading one whole body.
	BodyDeadline time.Duration
	// MaxUploads is how many bodies are read at once from clients without
	// a valid credential in a header; more are answered 503 with
	// Retry-After. Clients with one are not held back by strangers.
	MaxUploads int
}

// Defaults of the server limits.
const (
	defaultBodyReadGap = 15 * time.Second
	defaultMaxUploads  = 32
	// An honest upload of the largest body at minUploadRate ends in time.
	minUploadRate   = 1 << 20 // bytes per second
	bodyDeadlineMin = 30 * time.Second
	// uploadsRetryAfter is the Retry-After of too_many_uploads, seconds.
	uploadsRetryAfter = "5"
)

// DefaultServerLimits are the limits for attachments of at most maxFile
// bytes: the whole-body deadline grows with the largest body POST /send
// takes (maxItems files).
func DefaultServerLimits(maxFile int64) ServerLimits {
	largest := maxItems*(maxFile+64<<10) + maxFieldBytes
	return ServerLimits{
		BodyReadGap:  defaultBodyReadGap,
		BodyDeadline: bodyDeadlineMin + time.Duration(largest/minUploadRate)*time.Second,
		MaxUploads:   defaultMaxUploads,
	}
}

var errTooManyUploads = bridge.Errorf(bridge.KindUnavailable, "too_many_uploads",
	"too many uploads at once; retry after the Retry-After seconds")

// limitBodies applies s.Limits to next: a request with a body takes an
// upload slot (unless its header carries a valid credential) and reads its
// body under deadlines.
func (s *server) limitBodies(next http.Handler) http.Handler {
	slots := make(chan struct{}, s.Limits.MaxUploads)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if !s.trustedHeader(r) {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			default:
				w.Header().Set("Retry-After", uploadsRetryAfter)
				w.Header().Set("Connection", "close") // the body stays unread
				WriteError(w, s.Log, errTooManyUploads)
				return
			}
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: http.NewResponseController(w),
			gap: s.Limits.BodyReadGap, end: time.Now().Add(s.Limits.BodyDeadline)}
		next.ServeHTTP(w, r)
	})
}

// trustedHeader reports a request whose header carries the API key or the
// admin token. Nothing is counted here: the handler checks it again.
func (s *server) trustedHeader(r *http.Request) bool {
	return CredentialMatches(r.Header.Get(contract.APIKeyHeader), s.Send.APIKey) ||
		CredentialMatches(r.Header.Get(contract.AdminTokenHeader), s.AdminToken)
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
