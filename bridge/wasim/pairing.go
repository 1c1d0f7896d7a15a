package wasim

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

// qrRefCount is how many QR refs a new client gets (WhatsApp sends 6: the
// first lasts 60 s, the others 20 s each in whatsmeow's QR channel).
const qrRefCount = 6

// ADV signature prefixes (whatsmeow's AdvAccountSignaturePrefix and
// AdvDeviceSignaturePrefix).
var (
	advAccountPrefix = []byte{6, 0}
	advDevicePrefix  = []byte{6, 1}
)

// qrLinkPrefix starts the QR code of a current client: the phone's camera
// opens it as a link to the linked-devices screen.
const qrLinkPrefix = "https://wa.me/settings/linked_devices#"

// Errors of the linking flows.
var (
	ErrUnknownQR       = errors.New("wasim: QR code is unknown or expired (is the client still connected?)")
	ErrBadQR           = errors.New("wasim: not a WhatsApp QR code")
	ErrNoPendingCode   = errors.New("wasim: no client is waiting for a pairing code for this number")
	ErrWrongCode       = errors.New("wasim: wrong pairing code")
	ErrPairingRejected = errors.New("wasim: the client rejected the pairing")
)

// startRegistration answers a client without credentials with QR refs:
//
//	<iq type="set"><pair-device><ref>…</ref>…</pair-device></iq>
//
// whatsmeow turns each ref into a QR code (ScanQR reads it).
func (s *Simulator) startRegistration(c *conn) {
	refs := make([]waBinary.Node, qrRefCount)
	s.mu.Lock()
	for i := range refs {
		ref := "2@" + randomBase64(18)
		s.qrRefs[ref] = c
		refs[i] = waBinary.Node{Tag: "ref", Content: []byte(ref)}
	}
	s.mu.Unlock()
	iq := serverIQ("set", waBinary.Node{Tag: "pair-device", Content: refs})
	iq.Attrs["id"] = "pair-device-" + randomBase64(6)
	_ = c.send(iq) // the client's ack comes back as an iq result nobody waits for
}

// ScanQR links the client that shows qr (the Code of a whatsmeow QR
// event) to the user, as scanning it with the phone does. It returns the new
// device's JID once the client has confirmed the pairing; the client then
// reconnects and logs in on its own (events.PairSuccess, then
// events.Connected).
//
// The code is what whatsmeow shows: since 2026 a link,
// "https://wa.me/settings/linked_devices#ref,noise,identity,adv,type"; the
// bare "ref,noise,identity,adv" of older clients is read too.
func (u *User) ScanQR(ctx context.Context, qr string) (types.JID, error) {
	parts := strings.Split(strings.TrimPrefix(strings.TrimSpace(qr), qrLinkPrefix), ",")
	if len(parts) != 4 && len(parts) != 5 {
		return types.EmptyJID, ErrBadQR
	}
	noiseKey, err1 := base64.StdEncoding.DecodeString(parts[1])
	identity, err2 := base64.StdEncoding.DecodeString(parts[2])
	advSecret, err3 := base64.StdEncoding.DecodeString(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || len(noiseKey) != 32 || len(identity) != 32 || len(advSecret) != 32 {
		return types.EmptyJID, ErrBadQR
	}
	s := u.sim
	s.mu.Lock()
	c := s.qrRefs[parts[0]]
	s.mu.Unlock()
	if c == nil || c.clientStatic != [32]byte(noiseKey) {
		return types.EmptyJID, ErrUnknownQR
	}
	return s.linkCompanion(ctx, c, u, [32]byte(identity), advSecret)
}

// linkCompanion is the phone's side of linking, common to QR and code:
// it signs the new device's identity with the account key and sends
//
//	<iq type="set"><pair-success><device-identity/><device jid lid/><platform name/></pair-success></iq>
//
// The client checks the HMAC (with the ADV secret both sides know) and the
// account signature, adds its own device signature and answers with
// <pair-device-sign>. Then the server asks it to reconnect (stream error 515).
func (s *Simulator) linkCompanion(ctx context.Context, c *conn, u *User, identity [32]byte, advSecret []byte) (types.JID, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return types.EmptyJID, ErrClosed
	}
	if u.nextDevice == 0 || u.nextDevice > 99 {
		s.mu.Unlock()
		return types.EmptyJID, fmt.Errorf("wasim: %s has no free device ids", u.jid)
	}
	devID := u.nextDevice
	u.nextDevice++
	u.keyIndex++
	keyIndex := u.keyIndex
	// The QR refs and pairing codes of this connection are used up.
	for ref, rc := range s.qrRefs {
		if rc == c {
			delete(s.qrRefs, ref)
		}
	}
	for ref, p := range s.codePairs {
		if p.conn == c {
			delete(s.codePairs, ref)
		}
	}
	s.mu.Unlock()

	deviceJID := types.JID{User: u.jid.User, Server: types.DefaultUserServer, Device: devID}
	lidJID := types.JID{User: u.lid.User, Server: types.HiddenUserServer, Device: devID}
	details, err := proto.Marshal(&waAdv.ADVDeviceIdentity{
		RawID:     proto.Uint32(randomUint32()),
		Timestamp: proto.Uint64(uint64(time.Now().Unix())),
		KeyIndex:  proto.Uint32(keyIndex),
	})
	if err != nil {
		return types.EmptyJID, err
	}
	accountPub := u.phone.account.Pub[:]
	signed, err := proto.Marshal(&waAdv.ADVSignedDeviceIdentity{
		Details:             details,
		AccountSignatureKey: accountPub,
		AccountSignature:    xedSign(u.phone.account.Priv, concat(advAccountPrefix, details, identity[:])),
	})
	if err != nil {
		return types.EmptyJID, err
	}
	mac := hmac.New(sha256.New, advSecret)
	mac.Write(signed)
	container, err := proto.Marshal(&waAdv.ADVSignedDeviceIdentityHMAC{Details: signed, HMAC: mac.Sum(nil)})
	if err != nil {
		return types.EmptyJID, err
	}
	resp, err := c.request(ctx, serverIQ("set", waBinary.Node{Tag: "pair-success", Content: []waBinary.Node{
		{Tag: "device-identity", Content: container},
		{Tag: "platform", Attrs: waBinary.Attrs{"name": "android"}},
		{Tag: "device", Attrs: waBinary.Attrs{"jid": deviceJID, "lid": lidJID}},
	}}))
	if err != nil {
		return types.EmptyJID, fmt.Errorf("wasim: pair-success: %w", err)
	}
	if err := verifyPairDeviceSign(resp, details, identity, accountPub); err != nil {
		return types.EmptyJID, err
	}

	s.mu.Lock()
	u.companions[devID] = &companion{jid: deviceJID, noiseKey: c.clientStatic, identityKey: identity}
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Infof("linked %s", deviceJID)
	c.sendAndClose(streamErrorRestart())
	return deviceJID, nil
}

// verifyPairDeviceSign checks the client's answer to pair-success:
//
//	<iq type="result"><pair-device-sign><device-identity key-index>ADVSignedDeviceIdentity</device-identity></pair-device-sign></iq>
//
// whose device signature must cover the details, the device's identity key
// and the account key.
func verifyPairDeviceSign(resp *waBinary.Node, details []byte, identity [32]byte, accountPub []byte) error {
	if resp.Attrs["type"] != "result" {
		return fmt.Errorf("%w: %s", ErrPairingRejected, resp.GetChildByTag("error").Attrs["text"])
	}
	raw, ok := resp.GetChildByTag("pair-device-sign", "device-identity").Content.([]byte)
	if !ok {
		return fmt.Errorf("%w: no <pair-device-sign><device-identity>", ErrPairingRejected)
	}
	var signedByDevice waAdv.ADVSignedDeviceIdentity
	if err := proto.Unmarshal(raw, &signedByDevice); err != nil {
		return fmt.Errorf("%w: device identity: %w", ErrPairingRejected, err)
	}
	if !bytes.Equal(signedByDevice.GetDetails(), details) ||
		!xedVerify(identity[:], concat(advDevicePrefix, details, identity[:], accountPub), signedByDevice.GetDeviceSignature()) {
		return fmt.Errorf("%w: device signature does not verify", ErrPairingRejected)
	}
	return nil
}

// codePairing is a client waiting for its pairing code to be entered on the
// phone of user.
type codePairing struct {
	ref              string
	conn             *conn
	user             *User
	created          time.Time
	wrappedEphemeral []byte              // the companion's ephemeral key, encrypted with the code
	finish           chan *waBinary.Node // the client's companion_finish
}

// handleLinkCode answers <iq xmlns="md"><link_code_companion_reg stage="…"/></iq>.
//
// companion_hello: the client asks for a code for a phone number and sends
// its ephemeral key encrypted with the code it shows; the server answers
// with a pairing ref. companion_finish: the client's answer to the phone's
// primary_hello notification (see EnterCode).
func (s *Simulator) handleLinkCode(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	reg := iq.GetChildByTag("link_code_companion_reg")
	stage, _ := reg.Attrs["stage"].(string)
	switch stage {
	case "companion_hello":
		jid, ok := reg.Attrs["jid"].(types.JID)
		wrapped, ok2 := reg.GetChildByTag("link_code_pairing_wrapped_companion_ephemeral_pub").Content.([]byte)
		if !ok || !ok2 || len(wrapped) != 80 || c.user != nil {
			return nil, errBadRequest
		}
		u, err := s.userForNumber(jid.User)
		if err != nil {
			return nil, errBadRequest
		}
		p := &codePairing{ref: randomBase64(24), conn: c, user: u, created: time.Now(), wrappedEphemeral: wrapped, finish: make(chan *waBinary.Node, 1)}
		s.mu.Lock()
		s.codePairs[p.ref] = p
		s.mu.Unlock()
		return []waBinary.Node{{Tag: "link_code_companion_reg", Content: []waBinary.Node{
			{Tag: "link_code_pairing_ref", Content: []byte(p.ref)},
		}}}, nil
	case "companion_finish":
		ref, _ := reg.GetChildByTag("link_code_pairing_ref").Content.([]byte)
		s.mu.Lock()
		p := s.codePairs[string(ref)]
		s.mu.Unlock()
		if p == nil || p.conn != c {
			return nil, errNotFound
		}
		finish := reg
		select {
		case p.finish <- &finish:
		default:
			return nil, errBadRequest
		}
		return nil, nil
	}
	return nil, errBadRequest
}

// EnterCode types a pairing code (from whatsmeow's PairPhone, with or without
// the dash) into the user's phone and links the client that asked for it.
// It returns the new device's JID once the client has confirmed, or
// ErrWrongCode when the code does not match.
func (u *User) EnterCode(ctx context.Context, code string) (types.JID, error) {
	code = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	s := u.sim
	s.mu.Lock()
	var p *codePairing
	for _, cand := range s.codePairs {
		if cand.user == u && (p == nil || cand.created.After(p.created)) {
			p = cand
		}
	}
	s.mu.Unlock()
	if p == nil {
		return types.EmptyJID, ErrNoPendingCode
	}
	companionEphemeral, err := unwrapWithCode(code, p.wrappedEphemeral)
	if err != nil {
		return types.EmptyJID, err
	}
	primaryEphemeral := keys.NewKeyPair()
	wrapped, err := wrapWithCode(code, primaryEphemeral.Pub[:])
	if err != nil {
		return types.EmptyJID, err
	}
	err = p.conn.send(waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": types.ServerJID, "type": "link_code_companion_reg", "id": randomBase64(9), "t": time.Now().Unix(),
	}, Content: []waBinary.Node{{Tag: "link_code_companion_reg", Attrs: waBinary.Attrs{"stage": "primary_hello"}, Content: []waBinary.Node{
		{Tag: "link_code_pairing_ref", Content: []byte(p.ref)},
		{Tag: "link_code_pairing_wrapped_primary_ephemeral_pub", Content: wrapped},
		{Tag: "primary_identity_pub", Content: u.phone.account.Pub[:]},
	}}}})
	if err != nil {
		return types.EmptyJID, fmt.Errorf("wasim: send primary_hello: %w", err)
	}
	var finish *waBinary.Node
	select {
	case finish = <-p.finish:
	case <-ctx.Done():
		return types.EmptyJID, ctx.Err()
	case <-p.conn.ctx.Done():
		return types.EmptyJID, fmt.Errorf("wasim: client disconnected during pairing: %w", errConnClosed)
	}
	companionIdentity, advSecret, err := u.openKeyBundle(finish, primaryEphemeral, companionEphemeral)
	if err != nil {
		return types.EmptyJID, err
	}
	return s.linkCompanion(ctx, p.conn, u, companionIdentity, advSecret)
}

// openKeyBundle decrypts the companion's key bundle from companion_finish
// and derives the ADV secret, mirroring whatsmeow's handleCodePairNotification.
// A wrong code gives a different shared secret, so the bundle fails to open.
func (u *User) openKeyBundle(finish *waBinary.Node, primaryEphemeral *keys.KeyPair, companionEphemeral []byte) ([32]byte, []byte, error) {
	var none [32]byte
	wrapped, ok := finish.GetChildByTag("link_code_pairing_wrapped_key_bundle").Content.([]byte)
	identity, ok2 := finish.GetChildByTag("companion_identity_public").Content.([]byte)
	if !ok || !ok2 || len(wrapped) < 32+12+16 || len(identity) != 32 {
		return none, nil, fmt.Errorf("%w: malformed companion_finish", ErrPairingRejected)
	}
	ephemeralShared, err := x25519(primaryEphemeral.Priv[:], companionEphemeral)
	if err != nil {
		return none, nil, ErrWrongCode
	}
	bundleKey, err := hkdf.Key(sha256.New, ephemeralShared, wrapped[:32], "link_code_pairing_key_bundle_encryption_key", 32)
	if err != nil {
		return none, nil, err
	}
	gcm, err := newGCM(bundleKey)
	if err != nil {
		return none, nil, err
	}
	bundle, err := gcm.Open(nil, wrapped[32:44], wrapped[44:], nil)
	if err != nil || len(bundle) != 96 {
		return none, nil, ErrWrongCode
	}
	if !bytes.Equal(bundle[:32], identity) || !bytes.Equal(bundle[32:64], u.phone.account.Pub[:]) {
		return none, nil, fmt.Errorf("%w: key bundle names other keys", ErrPairingRejected)
	}
	identityShared, err := x25519(u.phone.account.Priv[:], identity)
	if err != nil {
		return none, nil, fmt.Errorf("%w: %w", ErrPairingRejected, err)
	}
	advSecret, err := hkdf.Key(sha256.New, concat(ephemeralShared, identityShared, bundle[64:]), nil, "adv_secret", 32)
	if err != nil {
		return none, nil, err
	}
	return [32]byte(identity), advSecret, nil
}

// pairingCodeIterations is whatsmeow's PBKDF2 cost for the code key (2<<16).
const pairingCodeIterations = 2 << 16

// wrapWithCode encrypts a 32-byte key with the pairing code:
// salt(32) || iv(16) || AES-256-CTR(PBKDF2(code, salt), iv, key).
func wrapWithCode(code string, key []byte) ([]byte, error) {
	out := make([]byte, 80)
	if _, err := rand.Read(out[:48]); err != nil {
		return nil, err
	}
	stream, err := codeStream(code, out[:32], out[32:48])
	if err != nil {
		return nil, err
	}
	stream.XORKeyStream(out[48:], key)
	return out, nil
}

func unwrapWithCode(code string, wrapped []byte) ([]byte, error) {
	if len(wrapped) != 80 {
		return nil, errors.New("wasim: wrapped key must be 80 bytes")
	}
	stream, err := codeStream(code, wrapped[:32], wrapped[32:48])
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	stream.XORKeyStream(key, wrapped[48:])
	return key, nil
}

func codeStream(code string, salt, iv []byte) (cipher.Stream, error) {
	key, err := pbkdf2.Key(sha256.New, code, salt, pairingCodeIterations, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewCTR(block, iv), nil
}

func concat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

func randomBase64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func randomUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}
