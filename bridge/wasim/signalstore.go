package wasim

import (
	"context"
	"errors"

	groupRecord "go.mau.fi/libsignal/groups/state/record"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/protocol"
	"go.mau.fi/libsignal/state/record"
	signalStore "go.mau.fi/libsignal/state/store"

	"go.mau.fi/whatsmeow/store"
)

// serializer is the wire format whatsmeow uses for Signal messages and records.
var serializer = store.SignalProtobufSerializer

// memStore is an in-memory libsignal store for one simulated device.
//
// It has no lock of its own: a signalDevice owns it and holds its mutex
// around every libsignal call, because a Signal session must never be
// advanced by two goroutines at once anyway. Records are kept serialized so
// that libsignal never shares mutable state between calls.
type memStore struct {
	identity       *identity.KeyPair
	registrationID uint32
	trusted        map[string][32]byte
	preKeys        map[uint32][]byte
	signedPreKeys  map[uint32][]byte
	sessions       map[string][]byte
	senderKeys     map[string][]byte
}

var _ signalStore.SignalProtocol = (*memStore)(nil)

func newMemStore(id *identity.KeyPair, registrationID uint32) *memStore {
	return &memStore{
		identity:       id,
		registrationID: registrationID,
		trusted:        map[string][32]byte{},
		preKeys:        map[uint32][]byte{},
		signedPreKeys:  map[uint32][]byte{},
		sessions:       map[string][]byte{},
		senderKeys:     map[string][]byte{},
	}
}

func (s *memStore) GetIdentityKeyPair() *identity.KeyPair { return s.identity }
func (s *memStore) GetLocalRegistrationID() uint32        { return s.registrationID }

func (s *memStore) SaveIdentity(_ context.Context, addr *protocol.SignalAddress, key *identity.Key) error {
	s.trusted[addr.String()] = key.PublicKey().PublicKey()
	return nil
}

// IsTrustedIdentity trusts on first use and then requires the same key, as
// whatsmeow's own store does.
func (s *memStore) IsTrustedIdentity(_ context.Context, addr *protocol.SignalAddress, key *identity.Key) (bool, error) {
	known, ok := s.trusted[addr.String()]
	return !ok || known == key.PublicKey().PublicKey(), nil
}

func (s *memStore) LoadPreKey(_ context.Context, id uint32) (*record.PreKey, error) {
	raw, ok := s.preKeys[id]
	if !ok {
		return nil, nil
	}
	return record.NewPreKeyFromBytes(raw, serializer.PreKeyRecord)
}

func (s *memStore) StorePreKey(_ context.Context, id uint32, r *record.PreKey) error {
	s.preKeys[id] = r.Serialize()
	return nil
}

func (s *memStore) ContainsPreKey(_ context.Context, id uint32) (bool, error) {
	_, ok := s.preKeys[id]
	return ok, nil
}

func (s *memStore) RemovePreKey(_ context.Context, id uint32) error {
	delete(s.preKeys, id)
	return nil
}

func (s *memStore) LoadSignedPreKey(_ context.Context, id uint32) (*record.SignedPreKey, error) {
	raw, ok := s.signedPreKeys[id]
	if !ok {
		return nil, nil
	}
	return record.NewSignedPreKeyFromBytes(raw, serializer.SignedPreKeyRecord)
}

func (s *memStore) LoadSignedPreKeys(ctx context.Context) ([]*record.SignedPreKey, error) {
	out := make([]*record.SignedPreKey, 0, len(s.signedPreKeys))
	for id := range s.signedPreKeys {
		r, err := s.LoadSignedPreKey(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *memStore) StoreSignedPreKey(_ context.Context, id uint32, r *record.SignedPreKey) error {
	s.signedPreKeys[id] = r.Serialize()
	return nil
}

func (s *memStore) ContainsSignedPreKey(_ context.Context, id uint32) (bool, error) {
	_, ok := s.signedPreKeys[id]
	return ok, nil
}

func (s *memStore) RemoveSignedPreKey(_ context.Context, id uint32) error {
	delete(s.signedPreKeys, id)
	return nil
}

// LoadSession returns an empty record when there is none, as libsignal expects.
func (s *memStore) LoadSession(_ context.Context, addr *protocol.SignalAddress) (*record.Session, error) {
	raw, ok := s.sessions[addr.String()]
	if !ok {
		return record.NewSession(serializer.Session, serializer.State), nil
	}
	return record.NewSessionFromBytes(raw, serializer.Session, serializer.State)
}

func (s *memStore) GetSubDeviceSessions(context.Context, string) ([]uint32, error) {
	return nil, errors.New("wasim: GetSubDeviceSessions is not used by WhatsApp")
}

func (s *memStore) StoreSession(_ context.Context, addr *protocol.SignalAddress, r *record.Session) error {
	s.sessions[addr.String()] = r.Serialize()
	return nil
}

func (s *memStore) ContainsSession(_ context.Context, addr *protocol.SignalAddress) (bool, error) {
	_, ok := s.sessions[addr.String()]
	return ok, nil
}

func (s *memStore) DeleteSession(_ context.Context, addr *protocol.SignalAddress) error {
	delete(s.sessions, addr.String())
	return nil
}

func (s *memStore) DeleteAllSessions(context.Context) error {
	clear(s.sessions)
	return nil
}

func senderKeyID(name *protocol.SenderKeyName) string {
	return name.GroupID() + "\x00" + name.Sender().String()
}

func (s *memStore) StoreSenderKey(_ context.Context, name *protocol.SenderKeyName, r *groupRecord.SenderKey) error {
	s.senderKeys[senderKeyID(name)] = r.Serialize()
	return nil
}

func (s *memStore) LoadSenderKey(_ context.Context, name *protocol.SenderKeyName) (*groupRecord.SenderKey, error) {
	raw, ok := s.senderKeys[senderKeyID(name)]
	if !ok {
		return groupRecord.NewSenderKey(serializer.SenderKeyRecord, serializer.SenderKeyState), nil
	}
	return groupRecord.NewSenderKeyFromBytes(raw, serializer.SenderKeyRecord, serializer.SenderKeyState)
}
