package webhook

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// errLocalTarget is what a connection to a loopback or link-local address
// ends with while Options.LocalTargets is off.
var errLocalTarget = errors.New("the target resolves to a loopback or link-local address")

// localAddress reports an address on this host or its link: loopback,
// link-local (169.254.169.254, the clouds' metadata service, is one) and
// the unspecified address, which connects to this host.
func localAddress(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsUnspecified()
}

// RefuseLocal is a dialer's Control: it refuses a connection to a local
// address, checked on the address dialed, after the name resolved (a name
// that resolves to 127.0.0.1 is refused as 127.0.0.1 is, whatever it
// resolved to when the subscription was made). The Cloud door's media
// links use it too.
func RefuseLocal(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if localAddress(ap.Addr()) {
		return errLocalTarget
	}
	return nil
}

// dialer is how every connection to a target is made: deliveries, probes,
// NATS and the verification handshake.
func (o *Outbox) dialer() *net.Dialer {
	d := &net.Dialer{Timeout: probeTimeout, KeepAlive: 30 * time.Second}
	if !o.opts.LocalTargets {
		d.Control = RefuseLocal
	}
	return d
}
