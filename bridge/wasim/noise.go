package wasim

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/socket"
	"go.mau.fi/whatsmeow/util/keys"
)

// noiseState is the responder's side of WhatsApp's Noise_XX_25519_AESGCM_SHA256
// handshake: a running transcript hash, a chaining key (salt) and the
// current AES-GCM key with its nonce counter.
type noiseState struct {
	hash    []byte
	salt    []byte
	aead    cipher.AEAD
	counter uint32
}

func newNoiseState() (*noiseState, error) {
	// The pattern name is exactly 32 bytes, so it is used as the initial hash
	// directly (Noise: h = name if len(name) <= HASHLEN).
	start := []byte(socket.NoiseStartPattern)
	aead, err := newGCM(start)
	if err != nil {
		return nil, err
	}
	ns := &noiseState{hash: start, salt: start, aead: aead}
	ns.authenticate(socket.WAConnHeader)
	return ns, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// nonce is the 12-byte GCM nonce: 8 zero bytes then the big-endian counter.
func nonce(counter uint32) []byte {
	iv := make([]byte, 12)
	binary.BigEndian.PutUint32(iv[8:], counter)
	return iv
}

func (ns *noiseState) authenticate(data []byte) {
	h := sha256.New()
	h.Write(ns.hash)
	h.Write(data)
	ns.hash = h.Sum(nil)
}

// mixKey performs a Curve25519 exchange and mixes the result into the chaining key.
func (ns *noiseState) mixKey(priv *[32]byte, pub []byte) error {
	secret, err := x25519(priv[:], pub)
	if err != nil {
		return err
	}
	next, key, err := expand(ns.salt, secret)
	if err != nil {
		return err
	}
	aead, err := newGCM(key)
	if err != nil {
		return err
	}
	ns.salt, ns.aead, ns.counter = next, aead, 0
	return nil
}

func (ns *noiseState) encrypt(plaintext []byte) []byte {
	ct := ns.aead.Seal(nil, nonce(ns.counter), plaintext, ns.hash)
	ns.counter++
	ns.authenticate(ct)
	return ct
}

func (ns *noiseState) decrypt(ciphertext []byte) ([]byte, error) {
	pt, err := ns.aead.Open(nil, nonce(ns.counter), ciphertext, ns.hash)
	ns.counter++
	if err != nil {
		return nil, err
	}
	ns.authenticate(ciphertext)
	return pt, nil
}

// expand is HKDF-SHA256 with the chaining key as salt, split into two 32-byte keys.
func expand(salt, secret []byte) (first, second []byte, err error) {
	out, err := hkdf.Key(sha256.New, secret, salt, "", 64)
	if err != nil {
		return nil, nil, err
	}
	return out[:32], out[32:], nil
}

// x25519 rejects malformed and low-order public keys instead of panicking.
func x25519(priv, pub []byte) ([]byte, error) {
	sk, err := ecdh.X25519().NewPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	pk, err := ecdh.X25519().NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("bad curve25519 public key: %w", err)
	}
	return sk.ECDH(pk)
}

// transportKeys are the keys of an established connection. The client writes
// with the first key derived at the end of the handshake, the server with the second.
type transportKeys struct {
	read, write cipher.AEAD
}

// handshakeResult is what the server learns in the handshake.
type handshakeResult struct {
	keys         transportKeys
	clientStatic [32]byte // the client's Noise key (its long-term device key)
	payload      *waWa6.ClientPayload
}

var errHandshake = errors.New("noise handshake failed")

// serverHandshake runs the responder side of Noise XX over fr:
//
//	-> e                (ClientHello)
//	<- e, ee, s, es     (ServerHello: static key and certificate chain encrypted)
//	-> s, se            (ClientFinish: client static key and ClientPayload encrypted)
func serverHandshake(ctx context.Context, fr *frameConn, static *keys.KeyPair, certChain []byte) (*handshakeResult, error) {
	ns, err := newNoiseState()
	if err != nil {
		return nil, err
	}
	raw, err := fr.readFrame(ctx)
	if err != nil {
		return nil, err
	}
	var hello waWa6.HandshakeMessage
	if err := proto.Unmarshal(raw, &hello); err != nil {
		return nil, fmt.Errorf("%w: client hello: %w", errHandshake, err)
	}
	clientEphemeral := hello.GetClientHello().GetEphemeral()
	if len(clientEphemeral) != 32 {
		return nil, fmt.Errorf("%w: client ephemeral key has %d bytes", errHandshake, len(clientEphemeral))
	}
	ns.authenticate(clientEphemeral)

	ephemeral := keys.NewKeyPair()
	ns.authenticate(ephemeral.Pub[:])
	if err := ns.mixKey(ephemeral.Priv, clientEphemeral); err != nil {
		return nil, fmt.Errorf("%w: ee: %w", errHandshake, err)
	}
	encStatic := ns.encrypt(static.Pub[:])
	if err := ns.mixKey(static.Priv, clientEphemeral); err != nil {
		return nil, fmt.Errorf("%w: es: %w", errHandshake, err)
	}
	encCert := ns.encrypt(certChain)
	serverHello, err := proto.Marshal(&waWa6.HandshakeMessage{ServerHello: &waWa6.HandshakeMessage_ServerHello{
		Ephemeral: ephemeral.Pub[:], Static: encStatic, Payload: encCert,
	}})
	if err != nil {
		return nil, err
	}
	if err := fr.writeFrame(ctx, serverHello); err != nil {
		return nil, err
	}

	raw, err = fr.readFrame(ctx)
	if err != nil {
		return nil, err
	}
	var finish waWa6.HandshakeMessage
	if err := proto.Unmarshal(raw, &finish); err != nil {
		return nil, fmt.Errorf("%w: client finish: %w", errHandshake, err)
	}
	clientStatic, err := ns.decrypt(finish.GetClientFinish().GetStatic())
	if err != nil || len(clientStatic) != 32 {
		return nil, fmt.Errorf("%w: client static key does not decrypt", errHandshake)
	}
	if err := ns.mixKey(ephemeral.Priv, clientStatic); err != nil {
		return nil, fmt.Errorf("%w: se: %w", errHandshake, err)
	}
	payloadRaw, err := ns.decrypt(finish.GetClientFinish().GetPayload())
	if err != nil {
		return nil, fmt.Errorf("%w: client payload does not decrypt", errHandshake)
	}
	var payload waWa6.ClientPayload
	if err := proto.Unmarshal(payloadRaw, &payload); err != nil {
		return nil, fmt.Errorf("%w: client payload: %w", errHandshake, err)
	}

	clientWrite, serverWrite, err := expand(ns.salt, nil)
	if err != nil {
		return nil, err
	}
	read, err := newGCM(clientWrite)
	if err != nil {
		return nil, err
	}
	write, err := newGCM(serverWrite)
	if err != nil {
		return nil, err
	}
	return &handshakeResult{
		keys:         transportKeys{read: read, write: write},
		clientStatic: [32]byte(clientStatic),
		payload:      &payload,
	}, nil
}
