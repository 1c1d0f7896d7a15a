package cloudapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// linkDoor is a door that fetches links from hosts into a spool of its
// own.
func linkDoor(t *testing.T, hosts ...string) *Door {
	return New(Config{CheckKey: anyKey, Space: spool.NewSpace(t.TempDir(), 0), MaxFileSize: 1 << 20, Links: LinkFetcher{Hosts: hosts}})
}

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
	byName := linkDoor(t, "localhost"+port)
	if _, err := byName.fetchLink(linkRequest(), "http://localhost"+port+"/a.png", ""); err == nil || hits.Load() != 0 {
		t.Errorf("a name resolving to loopback was fetched: %v, %d requests", err, hits.Load())
	}
	byAddress := linkDoor(t, strings.TrimPrefix(files.URL, "http://"))
	f, err := byAddress.fetchLink(linkRequest(), files.URL+"/a.png", "")
	if err != nil || f.Name != "a.png" || f.Size != 3 || hits.Load() != 1 {
		t.Errorf("a host listed by address: %+v %v, %d requests", f, err, hits.Load())
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
	d := linkDoor(t, strings.TrimPrefix(files.URL, "http://"))
	var wg sync.WaitGroup
	for range maxLinkFetches {
		wg.Go(func() { _, _ = d.fetchLink(linkRequest(), files.URL+"/a.png", "") })
	}
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { return inFlight.Load(), inFlight.Load() == maxLinkFetches }, "fetches under way")
	_, err := d.fetchLink(linkRequest(), files.URL+"/a.png", "")
	if g, ok := errors.AsType[*GraphError](err); !ok || g.status != http.StatusTooManyRequests || g.Code != CodeRateLimit || g.retryAfter == "" {
		t.Errorf("one link beyond the cap: %v", err)
	}
	close(release)
	wg.Wait()
}
