package guard

import (
	"context"
	"io"
	"net/http"
	"sync"
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
	// MaxUploads is how many large bodies are read at once from clients
	// whose credential is not verified yet; more wait for a slot up to
	// KeyDeadline, then are answered 503 with Retry-After. Clients with a
	// credential in a header never take a slot, and a body that presents
	// the right one gives its slot back at once.
	MaxUploads int
	// UploadsPerAddress is how many of those slots one client address may
	// hold, so that one stranger cannot take them all.
	UploadsPerAddress int
	// KeyDeadline is how long a body may take before it presents a valid
	// credential (POST /send's apiKey field, the dashboard's token): a
	// stranger holds a slot and a connection at most this long.
	KeyDeadline time.Duration
}

// Defaults of the limits.
const (
	defaultBodyReadGap       = 15 * time.Second
	DefaultMaxUploads        = 32
	DefaultUploadsPerAddress = 4
	DefaultKeyDeadline       = 10 * time.Second
	// An honest upload of the largest body at minUploadRate ends in time.
	minUploadRate   = 1 << 20 // bytes per second
	bodyDeadlineMin = 30 * time.Second
	// smallBody is the largest declared body that takes no slot: its
	// memory is bounded by its length (a sign-in, a text send), so a full
	// set of slots never refuses it.
	smallBody = 64 << 10
	// uploadsRetryAfter is the Retry-After of too_many_uploads, seconds.
	uploadsRetryAfter = "5"
)

// DefaultLimits are the limits for bodies of at most largest bytes: the
// whole-body deadline grows with it.
func DefaultLimits(largest int64) Limits {
	return Limits{
		BodyReadGap:       defaultBodyReadGap,
		BodyDeadline:      bodyDeadlineMin + time.Duration(largest/minUploadRate)*time.Second,
		MaxUploads:        DefaultMaxUploads,
		UploadsPerAddress: DefaultUploadsPerAddress,
		KeyDeadline:       DefaultKeyDeadline,
	}
}

// ErrTooManyUploads answers a body beyond Limits.MaxUploads.
var ErrTooManyUploads = bridge.Errorf(bridge.KindUnavailable, bridge.CodeTooManyUploads,
	"too many uploads at once; retry after the Retry-After seconds")

// bodies holds the upload slots of Bodies.
type bodies struct {
	limits Limits
	slots  chan struct{}

	mu     sync.Mutex
	byAddr map[string]int
}

// Bodies applies limits to the bodies next reads. A request whose header
// carries a credential (trusted checks it without counting it) reads its
// body under the read gap and the whole-body deadline. Any other must
// present its credential within KeyDeadline (Verified, which Check calls,
// lifts that), and a large one takes an upload slot until then. refuse
// writes the error of a request turned away.
func Bodies(limits Limits, trusted func(*http.Request) bool, refuse func(http.ResponseWriter, error), next http.Handler) http.Handler {
	if limits.UploadsPerAddress <= 0 {
		limits.UploadsPerAddress = limits.MaxUploads
	}
	if limits.KeyDeadline <= 0 {
		limits.KeyDeadline = limits.BodyDeadline
	}
	b := &bodies{limits: limits, slots: make(chan struct{}, limits.MaxUploads), byAddr: map[string]int{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		body := &deadlineBody{ReadCloser: r.Body, rc: http.NewResponseController(w),
			gap: limits.BodyReadGap, end: start.Add(limits.BodyDeadline)}
		if !trusted(r) {
			release, err := b.take(r)
			if err != nil {
				w.Header().Set("Retry-After", uploadsRetryAfter)
				w.Header().Set("Connection", "close") // the body stays unread
				refuse(w, err)
				return
			}
			p := &pass{body: body, release: release, full: body.end}
			defer p.verified()
			body.end = minTime(body.end, start.Add(limits.KeyDeadline))
			r = r.WithContext(context.WithValue(r.Context(), passKey{}, p))
		}
		r.Body = body
		next.ServeHTTP(w, r)
	})
}

// take finds r a slot when its body is large: one of the address's own and
// one of all, waiting up to KeyDeadline for the latter (slots turn over
// within it). The returned function gives them back.
func (b *bodies) take(r *http.Request) (func(), error) {
	if r.ContentLength > 0 && r.ContentLength <= smallBody {
		return func() {}, nil
	}
	addr := ClientAddress(r)
	b.mu.Lock()
	if b.byAddr[addr] >= b.limits.UploadsPerAddress {
		b.mu.Unlock()
		return nil, ErrTooManyUploads
	}
	b.byAddr[addr]++
	b.mu.Unlock()
	leave := func() {
		b.mu.Lock()
		if b.byAddr[addr]--; b.byAddr[addr] <= 0 {
			delete(b.byAddr, addr)
		}
		b.mu.Unlock()
	}
	wait := time.NewTimer(b.limits.KeyDeadline)
	defer wait.Stop()
	select {
	case b.slots <- struct{}{}:
		return func() { <-b.slots; leave() }, nil
	case <-wait.C:
	case <-r.Context().Done():
	}
	leave()
	return nil, ErrTooManyUploads
}

// pass is what Bodies knows of a body whose credential is not verified.
type pass struct {
	body    *deadlineBody
	full    time.Time // the whole-body deadline
	once    sync.Once
	release func()
}

func (p *pass) verified() {
	p.once.Do(func() {
		p.release()
		p.body.extend(p.full)
	})
}

type passKey struct{}

// Verified tells Bodies that r presented a valid credential: its body gets
// the whole-body deadline instead of KeyDeadline, and its upload slot is
// given back. Without a pass (a credential in the header) it does nothing.
func Verified(r *http.Request) {
	if p, ok := r.Context().Value(passKey{}).(*pass); ok {
		p.verified()
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// deadlineBody sets the connection's read deadline before each read: the
// gap from now, but never past the whole body's end. At the body's end the
// deadline is cleared, since net/http then reads the connection in the
// background to notice a client that goes away, and a deadline there would
// cancel a handler still at work. After any other error it is set in the
// past, so that nothing waits on the connection again.
type deadlineBody struct {
	io.ReadCloser
	rc  *http.ResponseController
	gap time.Duration

	mu   sync.Mutex // end moves when the credential is verified
	end  time.Time
	done bool
}

func (b *deadlineBody) extend(end time.Time) {
	b.mu.Lock()
	b.end = end
	b.mu.Unlock()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if !b.done {
		_ = b.rc.SetReadDeadline(minTime(time.Now().Add(b.gap), b.end))
	}
	b.mu.Unlock()
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
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
