package wasim

import (
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"go.mau.fi/libsignal/ecc"
	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waCert"
	"go.mau.fi/whatsmeow/util/keys"

	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
)

// testRootKey is the root key of every in-process simulator whose Options
// leave RootKey empty. It is generated once per process and never changes,
// so Install can put its public half into whatsmeow.WACertPubKey.
var testRootKey = keys.NewKeyPair()

var installOnce sync.Once

// Install points whatsmeow at in-process simulators: it sets
// whatsmeow.WACertPubKey to the package's test root key. It runs once per
// process; call it in TestMain, before any whatsmeow client goroutine
// exists. (whatsmeow's keepalive timings are whatsapp.TuneKeepAlive's to
// set; a test that needs a ghost connection noticed in seconds calls it.)
// It panics only if wasimclient.Install was already called with other
// settings, which is a programming error in the test binary.
func Install() {
	installOnce.Do(func() {
		err := wasimclient.Install(wasimclient.Globals{RootKey: *testRootKey.Pub})
		if err != nil {
			panic(fmt.Sprintf("wasim.Install: %v", err))
		}
	})
}

// RootKeyFromHex parses a root private key (64 hex characters) for
// Options.RootKey, e.g. so that a standalone simulator keeps the same root
// public key across restarts.
func RootKeyFromHex(s string) (*keys.KeyPair, error) {
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("root key must be 64 hex characters (32 bytes)")
	}
	return keys.NewKeyPairFromPrivateKey([32]byte(raw)), nil
}

// certificate serials of the simulated chain: root -> intermediate -> leaf.
const (
	intermediateSerial = 7
	leafSerial         = 8
)

// buildCertChain returns the Noise certificate chain the server sends in its
// handshake: an intermediate key signed by the root, and the server's static
// Noise key signed by the intermediate. whatsmeow checks both signatures, the
// issuer serials, that the leaf key equals the server's static key, and that
// the time is within each certificate's validity (as WhatsApp's are: the
// intermediate for years, the leaf for weeks, both from a little before now).
func buildCertChain(root *keys.KeyPair, static [32]byte) ([]byte, error) {
	intermediate := keys.NewKeyPair()
	now := time.Now()
	validFrom := proto.Uint64(uint64(now.Add(-time.Hour).Unix()))
	interDetails, err := proto.Marshal(&waCert.CertChain_NoiseCertificate_Details{
		Serial:       proto.Uint32(intermediateSerial),
		IssuerSerial: proto.Uint32(whatsmeow.WACertIssuerSerial),
		Key:          intermediate.Pub[:],
		NotBefore:    validFrom,
		NotAfter:     proto.Uint64(uint64(now.AddDate(5, 0, 0).Unix())),
	})
	if err != nil {
		return nil, err
	}
	leafDetails, err := proto.Marshal(&waCert.CertChain_NoiseCertificate_Details{
		Serial:       proto.Uint32(leafSerial),
		IssuerSerial: proto.Uint32(intermediateSerial),
		Key:          static[:],
		NotBefore:    validFrom,
		NotAfter:     proto.Uint64(uint64(now.AddDate(0, 0, 30).Unix())),
	})
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&waCert.CertChain{
		Intermediate: &waCert.CertChain_NoiseCertificate{Details: interDetails, Signature: xedSign(root.Priv, interDetails)},
		Leaf:         &waCert.CertChain_NoiseCertificate{Details: leafDetails, Signature: xedSign(intermediate.Priv, leafDetails)},
	})
}

// xedSign signs msg with a Curve25519 private key (XEdDSA), the signature
// scheme of WhatsApp certificates, Signal prekeys and device identities.
func xedSign(priv *[32]byte, msg []byte) []byte {
	sig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*priv), msg)
	return sig[:]
}

// xedVerify checks an XEdDSA signature; it never panics on bad lengths.
func xedVerify(pub, msg, sig []byte) bool {
	if len(pub) != 32 || len(sig) != 64 {
		return false
	}
	return ecc.VerifySignature(ecc.NewDjbECPublicKey([32]byte(pub)), msg, [64]byte(sig))
}
