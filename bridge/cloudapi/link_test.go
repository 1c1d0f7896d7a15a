package cloudapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// acceptingAPI is the bridge's own API taking every key and every upload.
var acceptingAPI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"upload_id":"up_1"}`))
		return
	}
	_, _ = w.Write([]byte(`[]`))
})

func linkRequest() *http.Request {
	return httptest.NewRequest(http.MethodPost, "/v21.0/1/messages", nil)
}

// A host CLOUD_MEDIA_HOSTS names by name is fetched only when it does not
// resolve to a loopback or link-local address (checked on the address
// dialled); one it names by address is the operator's own choice.
func TestLinkHostNamedByNameMustNotResolveLocally(t *testing.T) {
	var hits atomic.Int64
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("png"))
	}))
	t.Cleanup(files.Close)
	port := files.URL[strings.LastIndex(files.URL, ":"):]
	byName := New(Config{API: acceptingAPI, Links: LinkFetcher{Hosts: []string{"localhost" + port}}})
	if _, err := byName.uploadLink(linkRequest(), "http://localhost"+port+"/a.png", ""); err == nil || hits.Load() != 0 {
		t.Errorf("a name resolving to loopback was fetched: %v, %d requests", err, hits.Load())
	}
	byAddress := New(Config{API: acceptingAPI, Links: LinkFetcher{Hosts: []string{strings.TrimPrefix(files.URL, "http://")}}})
	if id, err := byAddress.uploadLink(linkRequest(), files.URL+"/a.png", ""); err != nil || id != "up_1" || hits.Load() != 1 {
		t.Errorf("a host listed by address: %q %v, %d requests", id, err, hits.Load())
	}
}

// At most maxLinkFetches links are fetched at once; one more is refused
// with Graph's rate limit at once, not queued on a file descriptor.
func TestLinkFetchesAreCapped(t *testing.T) {
	release := make(chan struct{})
	var inFlight atomic.Int64
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		inFlight.Add(1)
		<-release
		_, _ = w.Write([]byte("png"))
	}))
	t.Cleanup(files.Close)
	d := New(Config{API: acceptingAPI, Links: LinkFetcher{Hosts: []string{strings.TrimPrefix(files.URL, "http://")}}})
	var wg sync.WaitGroup
	for range maxLinkFetches {
		wg.Go(func() { _, _ = d.uploadLink(linkRequest(), files.URL+"/a.png", "") })
	}
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { return inFlight.Load(), inFlight.Load() == maxLinkFetches }, "fetches under way")
	_, err := d.uploadLink(linkRequest(), files.URL+"/a.png", "")
	if g, ok := errors.AsType[*GraphError](err); !ok || g.status != http.StatusTooManyRequests || g.Code != CodeRateLimit || g.retryAfter == "" {
		t.Errorf("one link beyond the cap: %v", err)
	}
	close(release)
	wg.Wait()
}
