package wasim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/util/optional"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// preKeyPub is a public prekey as it travels in <key> and <skey> nodes.
type preKeyPub struct {
	id  uint32 // 24 bits on the wire
	pub [32]byte
}

// publicKeys is what a device publishes to the server so that others can
// start Signal sessions with it: the fields of whatsmeow's prekey upload and
// of the <user> entries in a prekey fetch answer.
type publicKeys struct {
	registrationID uint32
	identity       [32]byte
	signed         preKeyPub
	signature      [64]byte
	oneTime        []preKeyPub // handed out once each, oldest first
}

// bundle converts the keys (with an optional one-time prekey) into a
// libsignal bundle for a simulated device that starts a session.
func (k *publicKeys) bundle(deviceID uint16, oneTime *preKeyPub) *prekey.Bundle {
	preKeyID, preKey := optional.NewEmptyUint32(), ecc.ECPublicKeyable(nil)
	if oneTime != nil {
		preKeyID, preKey = optional.NewOptionalUint32(oneTime.id), ecc.NewDjbECPublicKey(oneTime.pub)
	}
	return prekey.NewBundle(k.registrationID, uint32(deviceID), preKeyID, k.signed.id,
		preKey, ecc.NewDjbECPublicKey(k.signed.pub), k.signature,
		identity.NewKey(ecc.NewDjbECPublicKey(k.identity)))
}

// bundleNode renders the keys as one <user> entry of a prekey fetch answer:
//
//	<user jid><registration/><type/><identity/><skey><id/><value/><signature/></skey><key><id/><value/></key></user>
func (k *publicKeys) bundleNode(jid types.JID, oneTime *preKeyPub) waBinary.Node {
	var reg [4]byte
	binary.BigEndian.PutUint32(reg[:], k.registrationID)
	skey := preKeyNode("skey", k.signed)
	skey.Content = append(skey.GetChildren(), waBinary.Node{Tag: "signature", Content: k.signature[:]})
	children := []waBinary.Node{
		{Tag: "registration", Content: reg[:]},
		{Tag: "type", Content: []byte{ecc.DjbType}},
		{Tag: "identity", Content: k.identity[:]},
		skey,
	}
	if oneTime != nil {
		children = append(children, preKeyNode("key", *oneTime))
	}
	return waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": jid}, Content: children}
}

func preKeyNode(tag string, k preKeyPub) waBinary.Node {
	var id [4]byte
	binary.BigEndian.PutUint32(id[:], k.id)
	return waBinary.Node{Tag: tag, Content: []waBinary.Node{
		{Tag: "id", Content: id[1:]},
		{Tag: "value", Content: k.pub[:]},
	}}
}

// parseKeyUpload reads whatsmeow's prekey upload
//
//	<iq xmlns="encrypt" type="set"><registration/><type/><identity/><list><key/>…</list><skey/></iq>
//
// and checks the signed prekey's signature against the identity key, so a
// client that uploads garbage gets an error rather than broken sessions later.
func parseKeyUpload(iq *waBinary.Node) (*publicKeys, error) {
	var k publicKeys
	reg, ok := iq.GetChildByTag("registration").Content.([]byte)
	if !ok || len(reg) != 4 {
		return nil, errors.New("bad <registration>")
	}
	k.registrationID = binary.BigEndian.Uint32(reg)
	id, ok := iq.GetChildByTag("identity").Content.([]byte)
	if !ok || len(id) != 32 {
		return nil, errors.New("bad <identity>")
	}
	k.identity = [32]byte(id)
	skey := iq.GetChildByTag("skey")
	var err error
	if k.signed, err = parsePreKeyNode(skey); err != nil {
		return nil, fmt.Errorf("<skey>: %w", err)
	}
	sig, ok := skey.GetChildByTag("signature").Content.([]byte)
	if !ok || len(sig) != 64 {
		return nil, errors.New("bad <skey><signature>")
	}
	k.signature = [64]byte(sig)
	signedPub := append([]byte{ecc.DjbType}, k.signed.pub[:]...)
	if !xedVerify(k.identity[:], signedPub, k.signature[:]) {
		return nil, errors.New("signed prekey signature does not verify")
	}
	list := iq.GetChildByTag("list")
	for _, kn := range list.GetChildren() {
		pk, err := parsePreKeyNode(kn)
		if err != nil {
			return nil, fmt.Errorf("<list><key>: %w", err)
		}
		k.oneTime = append(k.oneTime, pk)
	}
	return &k, nil
}

func parsePreKeyNode(n waBinary.Node) (preKeyPub, error) {
	id, ok1 := n.GetChildByTag("id").Content.([]byte)
	val, ok2 := n.GetChildByTag("value").Content.([]byte)
	if !ok1 || !ok2 || len(id) != 3 || len(val) != 32 {
		return preKeyPub{}, errors.New("bad <id>/<value>")
	}
	return preKeyPub{id: uint32(id[0])<<16 | uint32(id[1])<<8 | uint32(id[2]), pub: [32]byte(val)}, nil
}

// keyDirectory holds the public keys every device published, by AD JID.
type keyDirectory struct {
	mu   sync.Mutex
	keys map[types.JID]*publicKeys
}

func newKeyDirectory() *keyDirectory {
	return &keyDirectory{keys: map[types.JID]*publicKeys{}}
}

// publish stores a device's keys. A later upload keeps the one-time prekeys
// still on the server and appends the new ones, like WhatsApp's server does
// when a client tops its prekeys up.
func (d *keyDirectory) publish(dev types.JID, k *publicKeys) {
	cp := *k
	d.mu.Lock()
	defer d.mu.Unlock()
	if old := d.keys[dev]; old != nil && old.identity == k.identity {
		cp.oneTime = append(slices.Clone(old.oneTime), k.oneTime...)
	} else {
		cp.oneTime = slices.Clone(k.oneTime)
	}
	d.keys[dev] = &cp
}

func (d *keyDirectory) forget(dev types.JID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.keys, dev)
}

// oneTimeCount is how many one-time prekeys of dev the server still holds.
func (d *keyDirectory) oneTimeCount(dev types.JID) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k := d.keys[dev]; k != nil {
		return len(k.oneTime)
	}
	return 0
}

// take returns a copy of dev's keys and consumes one one-time prekey (nil
// when they ran out: the signed prekey alone still starts a session).
func (d *keyDirectory) take(dev types.JID) (*publicKeys, *preKeyPub, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k, ok := d.keys[dev]
	if !ok {
		return nil, nil, false
	}
	var oneTime *preKeyPub
	if len(k.oneTime) > 0 {
		first := k.oneTime[0]
		oneTime = &first
		k.oneTime = k.oneTime[1:]
	}
	cp := *k
	cp.oneTime = nil
	return &cp, oneTime, true
}

// fetchBundle is take for a simulated device that starts a session with dev.
func (d *keyDirectory) fetchBundle(dev types.JID) (*prekey.Bundle, error) {
	k, oneTime, ok := d.take(dev)
	if !ok {
		return nil, fmt.Errorf("no keys published for %s", dev)
	}
	return k.bundle(dev.Device, oneTime), nil
}
