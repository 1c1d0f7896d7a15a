package cloudapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// LinkFetcher fetches media a Cloud message names by link: the one place
// the bridge fetches a URL a caller names, so only from the hosts of
// CLOUD_MEDIA_HOSTS (none: every link is refused), never following a
// redirect to another host, within a deadline. The file streams into an
// upload, which MAX_FILE_SIZE bounds as it bounds every upload.
type LinkFetcher struct {
	// Hosts are the host names (host or host:port) links may name.
	Hosts []string
	// Deadline bounds one fetch; one minute when zero.
	Deadline time.Duration
	// Client fetches; one that checks every redirect when nil.
	Client *http.Client
}

// Errors of links.
var (
	errLinkHost = invalidParam("media_host_not_allowed",
		"the link's host is not in CLOUD_MEDIA_HOSTS; upload the file (POST /{phone_number_id}/media) and send its id")
	errLinkURL = invalidParam("invalid_link", "link must be an http or https URL")
)

// allowed reports whether u names an allowed host.
func (f LinkFetcher) allowed(u *url.URL) bool {
	for _, h := range f.Hosts {
		if strings.EqualFold(h, u.Host) || strings.EqualFold(h, u.Hostname()) && u.Port() == "" {
			return true
		}
	}
	return false
}

// check parses a link and refuses one the bridge may not fetch.
func (f LinkFetcher) check(link string) (*url.URL, error) {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, errLinkURL
	}
	if !f.allowed(u) {
		return nil, errLinkHost
	}
	return u, nil
}

func (f LinkFetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = dialAllowed
	return &http.Client{CheckRedirect: f.checkRedirect, Transport: tr}
}

// dialAllowed connects to a link's host. A host CLOUD_MEDIA_HOSTS names by
// address is the operator's own choice and dialled as it is; one named by
// name must not resolve to a loopback or link-local address, checked on
// the address dialled (a name pointed at 127.0.0.1 or the cloud's metadata
// service would reach the pod's own ports through the allow-list).
func dialAllowed(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if host, _, err := net.SplitHostPort(addr); err != nil || !isAddress(host) {
		d.Control = webhook.RefuseLocal
	}
	return d.DialContext(ctx, network, addr)
}

func isAddress(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

// maxLinkFetches bounds the links fetched at once: each holds a connection
// and a file descriptor or two for up to a minute, and 200 at once took a
// bridge from 19 to 422 descriptors.
const maxLinkFetches = 8

// errTooManyLinks answers a link beyond maxLinkFetches.
var errTooManyLinks = func() *GraphError {
	g := graphErr(http.StatusTooManyRequests, CodeRateLimit, "(#130429) Rate limit hit",
		"at most 8 media links are fetched at once; retry shortly, or upload the file and send its id", "too_many_link_fetches")
	g.retryAfter = "1"
	return g
}

// checkRedirect follows a redirect only to the host the link named.
func (f LinkFetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 || !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
		return errors.New("redirect to another host")
	}
	return nil
}

// fetchLink fetches link into the spool, as an upload is written there
// (MAX_FILE_SIZE, SPOOL_MAX_BYTES), for one send. Only a request whose
// credential passed gets here: a stranger makes the bridge fetch nothing.
func (d *Door) fetchLink(r *http.Request, link, name string) (*spool.File, error) {
	f := d.cfg.Links
	u, err := f.check(link)
	if err != nil {
		return nil, err
	}
	select {
	case d.links <- struct{}{}:
		defer func() { <-d.links }()
	default:
		return nil, errTooManyLinks()
	}
	deadline := f.Deadline
	if deadline <= 0 {
		deadline = defaultLinkDeadline
	}
	ctx, cancel := context.WithTimeout(r.Context(), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, errLinkURL
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, linkFailed("the link could not be fetched: " + err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, linkFailed("the link answered " + resp.Status)
	}
	if name == "" {
		name = path.Base(u.Path)
	}
	return d.spoolFile(resp.Body, name)
}

// linkFailed is Graph's media download error.
func linkFailed(details string) *GraphError {
	return graphErr(http.StatusBadRequest, CodeMediaDownload, "(#131052) Media download error", details, "media_link_failed")
}
