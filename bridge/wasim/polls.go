package wasim

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// pollVoteUseCase names the key a vote is encrypted with, as WhatsApp's
// clients derive it from the poll's secret.
const pollVoteUseCase = "Poll Vote"

// ErrNotAPoll is returned when a vote names a message that is no poll, or a
// poll that did not carry its secret.
var ErrNotAPoll = errors.New("wasim: the message is not a poll with a secret")

// Poll is the poll a message carries; nil for other messages.
func (m *Message) Poll() *waE2E.PollCreationMessage { return m.Content().GetPollCreationMessage() }

// Vote votes on a poll the user's phone received, as a phone does: the
// chosen options by the SHA-256 of their names, encrypted with AES-GCM
// under a key derived (HKDF-SHA256) from the poll's message secret, the
// poll's id and sender and the voter, and sent as a PollUpdateMessage into
// the poll's chat. A vote with no options takes an earlier one back; names
// the poll does not have are sent as they are (a phone never does).
func (u *User) Vote(ctx context.Context, poll *Message, options ...string) (types.MessageID, error) {
	secret := poll.Content().GetMessageContextInfo().GetMessageSecret()
	if poll.Poll() == nil || len(secret) == 0 {
		return "", ErrNotAPoll
	}
	pollSender := poll.Sender.ToNonAD()
	group := poll.Chat.Server == types.GroupServer
	key := &waCommon.MessageKey{RemoteJID: proto.String(pollSender.String()), FromMe: proto.Bool(false), ID: proto.String(poll.ID)}
	chat := pollSender
	voterAttr := "from"
	if group {
		key.RemoteJID, key.Participant, chat, voterAttr = proto.String(poll.Chat.String()), proto.String(pollSender.String()), poll.Chat, "participant"
	}
	voter, ok := u.senderAttrs(group)[voterAttr].(types.JID)
	if !ok {
		return "", fmt.Errorf("wasim: %s names no voter", u.jid)
	}
	vote := &waE2E.PollVoteMessage{}
	for _, o := range options {
		sum := sha256.Sum256([]byte(o))
		vote.SelectedOptions = append(vote.SelectedOptions, sum[:])
	}
	enc, err := encryptVote(secret, poll.ID, pollSender, voter.ToNonAD(), vote)
	if err != nil {
		return "", err
	}
	return u.Send(ctx, chat, &waE2E.Message{PollUpdateMessage: &waE2E.PollUpdateMessage{
		PollCreationMessageKey: key, Vote: enc, SenderTimestampMS: proto.Int64(time.Now().UnixMilli()),
	}})
}

// encryptVote encrypts vote as the voter's phone does: the key is
// HKDF-SHA256 of the poll's secret with info = poll id, poll sender, voter
// and the use case; the additional data is "<poll id>\x00<voter>".
func encryptVote(secret []byte, pollID types.MessageID, pollSender, voter types.JID, vote *waE2E.PollVoteMessage) (*waE2E.PollEncValue, error) {
	plaintext, err := proto.Marshal(vote)
	if err != nil {
		return nil, err
	}
	info := pollID + pollSender.String() + voter.String() + pollVoteUseCase
	key, err := hkdf.Key(sha256.New, secret, nil, info, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	iv := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(iv)
	ad := []byte(pollID + "\x00" + voter.String())
	return &waE2E.PollEncValue{EncPayload: gcm.Seal(nil, iv, plaintext, ad), EncIV: iv}, nil
}
