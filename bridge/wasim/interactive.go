package wasim

import (
	"context"
	"encoding/json"
	"errors"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// The server's refusals of a linked device's buttons, as whatsmeow's users
// measured them: the legacy <biz><buttons/> is 405; an <interactive> with
// no <native_flow> inside is 479.
const (
	ackLegacyButtons     = 405
	ackInteractiveNoFlow = 479
)

// bizRefusal is the error code the server answers a stanza's <biz> node
// with; 0 when it is taken.
func bizRefusal(biz waBinary.Node) int {
	if _, ok := biz.GetOptionalChildByTag("buttons"); ok {
		return ackLegacyButtons
	}
	if in, ok := biz.GetOptionalChildByTag("interactive"); ok {
		if _, ok := in.GetOptionalChildByTag("native_flow"); !ok {
			return ackInteractiveNoFlow
		}
	}
	return 0
}

// ShownButton is a reply button as a phone shows it.
type ShownButton struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Buttons are the quick-reply buttons the phone shows under the message.
// A native-flow message renders only when its stanza carried the <biz>
// node with an <interactive type="native_flow"> and its <native_flow>: a
// message without it is accepted by the server and shown by no phone, as
// WhatsApp does. nil when nothing renders.
func (m *Message) Buttons() []ShownButton {
	flow := m.Content().GetInteractiveMessage().GetNativeFlowMessage()
	if flow == nil || m.Biz == nil {
		return nil
	}
	in, ok := m.Biz.GetOptionalChildByTag("interactive")
	if _, hasFlow := in.GetOptionalChildByTag("native_flow"); !ok || in.Attrs["type"] != "native_flow" || !hasFlow {
		return nil
	}
	var shown []ShownButton
	for _, b := range flow.GetButtons() {
		var params struct {
			DisplayText string `json:"display_text"`
			ID          string `json:"id"`
		}
		if b.GetName() == "quick_reply" && json.Unmarshal([]byte(b.GetButtonParamsJSON()), &params) == nil {
			shown = append(shown, ShownButton{ID: params.ID, Title: params.DisplayText})
		}
	}
	return shown
}

// ErrNoSuchButton is returned when a tap names a button the message does
// not show.
var ErrNoSuchButton = errors.New("wasim: the message shows no such button")

// Tap taps a reply button the phone shows under msg, as a phone does: an
// InteractiveResponseMessage quoting msg, with the button's title as its
// body and its id in the native-flow response's params.
func (u *User) Tap(ctx context.Context, msg *Message, buttonID string) (types.MessageID, error) {
	for _, b := range msg.Buttons() {
		if b.ID != buttonID {
			continue
		}
		params, err := json.Marshal(map[string]string{"id": b.ID})
		if err != nil {
			return "", err
		}
		chat := msg.Chat
		if chat.Server != types.GroupServer {
			chat = msg.Sender.ToNonAD()
		}
		return u.Send(ctx, chat, &waE2E.Message{InteractiveResponseMessage: &waE2E.InteractiveResponseMessage{
			Body: &waE2E.InteractiveResponseMessage_Body{Text: proto.String(b.Title)},
			InteractiveResponseMessage: &waE2E.InteractiveResponseMessage_NativeFlowResponseMessage_{
				NativeFlowResponseMessage: &waE2E.InteractiveResponseMessage_NativeFlowResponseMessage{
					Name: proto.String("quick_reply"), ParamsJSON: proto.String(string(params)), Version: proto.Int32(1),
				},
			},
			ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String(msg.ID), Participant: proto.String(msg.Sender.ToNonAD().String()),
				QuotedMessage: msg.Content()},
		}})
	}
	return "", ErrNoSuchButton
}
