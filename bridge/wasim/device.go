package wasim

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/libsignal/groups"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/protocol"
	"go.mau.fi/libsignal/session"
	"go.mau.fi/libsignal/util/keyhelper"

	"go.mau.fi/whatsmeow/util/keys"
)

// oneTimePreKeys is how many one-time prekeys a simulated phone publishes.
// When they run out, sessions start from the signed prekey alone.
const oneTimePreKeys = 20

// signalDevice is the Signal side of a simulated phone (device 0 of a user):
// its identity, which is also the account key that signs linked devices,
// and its sessions and sender keys.
type signalDevice struct {
	account *keys.KeyPair // identity key pair in whatsmeow's form, for ADV signatures and X25519
	keys    *publicKeys   // what it publishes to the key directory

	mu    sync.Mutex // guards store: one libsignal operation at a time
	store *memStore
}

func newSignalDevice() (*signalDevice, error) {
	ctx := context.Background()
	account := keys.NewKeyPair()
	idPair := identity.NewKeyPair(identity.NewKey(ecc.NewDjbECPublicKey(*account.Pub)), ecc.NewDjbECPrivateKey(*account.Priv))
	regID := keyhelper.GenerateRegistrationID()%16380 + 1
	st := newMemStore(idPair, regID)
	spk, err := keyhelper.GenerateSignedPreKey(idPair, 1, serializer.SignedPreKeyRecord)
	if err != nil {
		return nil, err
	}
	_ = st.StoreSignedPreKey(ctx, spk.ID(), spk)
	pub := &publicKeys{
		registrationID: regID,
		identity:       *account.Pub,
		signed:         preKeyPub{id: spk.ID(), pub: spk.KeyPair().PublicKey().PublicKey()},
		signature:      spk.Signature(),
	}
	pks, err := keyhelper.GeneratePreKeys(1, oneTimePreKeys, serializer.PreKeyRecord)
	if err != nil {
		return nil, err
	}
	for _, pk := range pks {
		_ = st.StorePreKey(ctx, pk.ID().Value, pk)
		pub.oneTime = append(pub.oneTime, preKeyPub{id: pk.ID().Value, pub: pk.KeyPair().PublicKey().PublicKey()})
	}
	return &signalDevice{account: account, keys: pub, store: st}, nil
}

// decrypt opens a "pkmsg" (PreKeySignalMessage, which starts the session) or
// a "msg" (SignalMessage in an existing session) from the device at from,
// and strips whatsmeow's padding.
func (d *signalDevice) decrypt(ctx context.Context, from *protocol.SignalAddress, encType string, ciphertext []byte) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cipher := session.NewCipher(session.NewBuilderFromSignal(d.store, from, serializer), from)
	var padded []byte
	switch encType {
	case "pkmsg":
		msg, err := protocol.NewPreKeySignalMessageFromBytes(ciphertext, serializer.PreKeySignalMessage, serializer.SignalMessage)
		if err != nil {
			return nil, fmt.Errorf("parse pkmsg: %w", err)
		}
		if padded, err = cipher.DecryptMessage(ctx, msg); err != nil {
			return nil, fmt.Errorf("decrypt pkmsg: %w", err)
		}
	case "msg":
		msg, err := protocol.NewSignalMessageFromBytes(ciphertext, serializer.SignalMessage)
		if err != nil {
			return nil, fmt.Errorf("parse msg: %w", err)
		}
		if padded, err = cipher.Decrypt(ctx, msg); err != nil {
			return nil, fmt.Errorf("decrypt msg: %w", err)
		}
	default:
		return nil, fmt.Errorf("unsupported enc type %q", encType)
	}
	return unpad(padded)
}

// encrypt pads plaintext and encrypts it for the device at to. Without a
// session it first fetches to's bundle from the key directory, so the
// result is a "pkmsg"; once the peer has answered it is a "msg".
func (d *signalDevice) encrypt(ctx context.Context, to *protocol.SignalAddress, fetchBundle func() (*prekey.Bundle, error), plaintext []byte) (encType string, ciphertext []byte, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	builder := session.NewBuilderFromSignal(d.store, to, serializer)
	if ok, _ := d.store.ContainsSession(ctx, to); !ok {
		bundle, err := fetchBundle()
		if err != nil {
			return "", nil, err
		}
		if err := builder.ProcessBundle(ctx, bundle); err != nil {
			return "", nil, fmt.Errorf("process bundle of %s: %w", to, err)
		}
	}
	msg, err := session.NewCipher(builder, to).Encrypt(ctx, pad(plaintext))
	if err != nil {
		return "", nil, err
	}
	if msg.Type() == protocol.PREKEY_TYPE {
		return "pkmsg", msg.Serialize(), nil
	}
	return "msg", msg.Serialize(), nil
}

// processSenderKey stores a sender key the device received in a
// SenderKeyDistributionMessage for a group.
func (d *signalDevice) processSenderKey(ctx context.Context, name *protocol.SenderKeyName, skdm []byte) error {
	msg, err := protocol.NewSenderKeyDistributionMessageFromBytes(skdm, serializer.SenderKeyDistributionMessage)
	if err != nil {
		return fmt.Errorf("parse sender key distribution message: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return groups.NewGroupSessionBuilder(d.store, serializer).Process(ctx, name, msg)
}

// decryptGroup opens an "skmsg" with the sender key stored under name.
func (d *signalDevice) decryptGroup(ctx context.Context, name *protocol.SenderKeyName, ciphertext []byte) ([]byte, error) {
	msg, err := protocol.NewSenderKeyMessageFromBytes(ciphertext, serializer.SenderKeyMessage)
	if err != nil {
		return nil, fmt.Errorf("parse skmsg: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	builder := groups.NewGroupSessionBuilder(d.store, serializer)
	padded, err := groups.NewGroupCipher(builder, name, d.store).Decrypt(ctx, msg)
	if err != nil {
		return nil, fmt.Errorf("decrypt skmsg: %w", err)
	}
	return unpad(padded)
}

// encryptGroup encrypts plaintext with the device's own sender key for a
// group (created on first use) and returns the distribution message other
// members need to read it.
func (d *signalDevice) encryptGroup(ctx context.Context, name *protocol.SenderKeyName, plaintext []byte) (skdm, ciphertext []byte, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	builder := groups.NewGroupSessionBuilder(d.store, serializer)
	dist, err := builder.Create(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	msg, err := groups.NewGroupCipher(builder, name, d.store).Encrypt(ctx, pad(plaintext))
	if err != nil {
		return nil, nil, err
	}
	return dist.Serialize(), msg.SignedSerialize(), nil
}

// senderKey is the device's sender key for a group as a
// SenderKeyDistributionMessage: what a member needs to decrypt the device's
// next skmsg (created when the device has none yet).
func (d *signalDevice) senderKey(ctx context.Context, name *protocol.SenderKeyName) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dist, err := groups.NewGroupSessionBuilder(d.store, serializer).Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return dist.Serialize(), nil
}

// pad appends n (1..15) bytes of value n, like whatsmeow's padMessage.
func pad(plaintext []byte) []byte {
	var b [1]byte
	_, _ = rand.Read(b[:])
	n := b[0] & 0xf
	if n == 0 {
		n = 0xf
	}
	return append(bytes.Clone(plaintext), bytes.Repeat([]byte{n}, int(n))...)
}

// unpad reverses pad and checks the padding, like whatsmeow's unpadMessage.
func unpad(padded []byte) ([]byte, error) {
	if len(padded) == 0 {
		return nil, errors.New("empty plaintext")
	}
	n := int(padded[len(padded)-1])
	if n == 0 || n > len(padded) || !bytes.HasSuffix(padded, bytes.Repeat([]byte{byte(n)}, n)) {
		return nil, fmt.Errorf("bad padding (last byte %d)", n)
	}
	return padded[:len(padded)-n], nil
}
