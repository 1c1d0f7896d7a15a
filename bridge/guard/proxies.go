package guard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// maxForwardedHops bounds how many X-Forwarded-For entries are read: a
// client may send any number, the proxies in front add a few.
const maxForwardedHops = 16

// ParseProxies reads TRUSTED_PROXIES: comma-separated CIDRs (10.0.0.0/8,
// fd00::/8) or single addresses; empty trusts none.
func ParseProxies(text string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for field := range strings.SplitSeq(text, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		if p, err := netip.ParsePrefix(field); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(field)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR (10.0.0.0/8) nor an IP address", field)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Forwarded believes X-Forwarded-For from the trusted proxies only: when a
// request comes from one, its client address (r.RemoteAddr, which every
// limit and audit record of the bridge uses) becomes the nearest address
// in the header that is not a trusted proxy itself. Anyone else's header
// is ignored, since any client can write it.
func Forwarded(trusted []netip.Prefix, next http.Handler) http.Handler {
	if len(trusted) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if client, ok := forwardedClient(trusted, r); ok {
			r2 := *r
			r2.RemoteAddr = net.JoinHostPort(client.String(), "0")
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}

// forwardedClient walks X-Forwarded-For from the right (the entry the
// nearest proxy added) past trusted proxies to the first other address.
func forwardedClient(trusted []netip.Prefix, r *http.Request) (netip.Addr, bool) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !inAny(trusted, peer.Addr().Unmap()) {
		return netip.Addr{}, false
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	if len(hops) > maxForwardedHops {
		hops = hops[len(hops)-maxForwardedHops:]
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return netip.Addr{}, false // a forged or broken entry: keep the proxy's own address
		}
		if a = a.Unmap(); !inAny(trusted, a) || i == 0 {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func inAny(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
