package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// waitDead waits until exactly one dead letter is listed and returns it.
func (o testOutbox) waitDead(tb testing.TB, limit time.Duration) DeadLetter {
	tb.Helper()
	dead := testutil.Poll(tb, limit, func() ([]DeadLetter, bool) {
		dead, err := o.Failed(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		return dead, len(dead) == 1
	}, "waiting for one dead letter")
	return dead[0]
}

// A receiver that redirects has not received the event: the 3xx is a failed
// attempt whose last_error names the Location, and the redirect target is
// never called (a 302 used to be followed as a GET, whose 200 marked the
// event delivered; a 307 re-posted it to the other address).
func TestRedirectIsAFailedAttempt(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			var followed atomic.Int64
			mux := http.NewServeMux()
			mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", code) })
			mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { followed.Add(1) })
			srv := httptest.NewServer(mux)
			defer srv.Close()
			// A window shorter than any retry delay: the first failure is final.
			o := startOutbox(t, srv.URL+"/hook", func(opts *Options) { opts.MaxAge = time.Millisecond })
			o.enqueue(t, connected())
			dead := o.waitDead(t, 10*time.Second)
			if dead.Attempts != 1 || !strings.Contains(dead.LastError, strconv.Itoa(code)) || !strings.Contains(dead.LastError, `"/elsewhere"`) {
				t.Errorf("dead letter %+v", dead)
			}
			if n := followed.Load(); n != 0 {
				t.Errorf("the redirect was followed %d times", n)
			}
		})
	}
}

// A 429 with Retry-After: 0 is retried after baseDelay, not at once (it
// made a hot loop of thousands of posts a second), and every attempt counts
// toward the retry window, whose end makes the event a dead letter.
func TestRetryAfterZeroIsNotAHotLoop(t *testing.T) {
	testutil.SkipIfShort(t, "watches the retries for 2 s")
	r := newReceiver(t, false)
	r.answer.Store(http.StatusTooManyRequests)
	r.header.Store("0")
	// Attempts at about 0, 1 and 2 s; the one after would fall past 2.5 s.
	o := startOutbox(t, r.srv.URL, func(opts *Options) { opts.MaxAge = 2500 * time.Millisecond })
	o.enqueue(t, connected())
	dead := o.waitDead(t, 10*time.Second)
	hits := r.hits.Load()
	if hits < 2 || hits > 3 {
		t.Errorf("%d posts in the 2.5 s window, want 2-3 (one per second at most)", hits)
	}
	if int64(dead.Attempts) != hits || !strings.Contains(dead.LastError, "429") {
		t.Errorf("dead letter %+v after %d posts", dead, hits)
	}
}
