package wasim

import (
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Addressing is how a user's phone names itself in the messages it sends,
// as WhatsApp moves users from phone numbers to LIDs.
type Addressing int

const (
	// AddressPhone: messages come from the phone-number JID (the default)
	// and, as WhatsApp's have since clients address direct messages to LIDs,
	// name the LID beside it (sender_lid; participant_lid in groups).
	AddressPhone Addressing = iota
	// AddressLIDWithPhone: messages come from the LID and carry the phone
	// number beside it (sender_pn; participant_pn in groups), from which
	// whatsmeow learns the LID/phone pair.
	AddressLIDWithPhone
	// AddressLIDHidden: messages come from the LID alone; the receiver
	// does not learn the number.
	AddressLIDHidden
)

// SetAddressing sets how the user's phone addresses the messages it sends
// from now on.
func (u *User) SetAddressing(a Addressing) {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.addressing = a
}

// senderAttrs are the attributes that name the sender of a message the
// user's phone sends: from of a 1:1 message, participant of a group
// message (whose from is the group), as whatsmeow's parseMessageSource
// reads them.
func (u *User) senderAttrs(group bool) waBinary.Attrs {
	u.sim.mu.Lock()
	mode := u.addressing
	u.sim.mu.Unlock()
	key, altKey := "from", "sender_pn"
	if group {
		key, altKey = "participant", "participant_pn"
	}
	switch mode {
	case AddressLIDWithPhone:
		a := waBinary.Attrs{key: u.lid, altKey: u.jid}
		if group {
			a["addressing_mode"] = string(types.AddressingModeLID)
		}
		return a
	case AddressLIDHidden:
		a := waBinary.Attrs{key: u.lid}
		if group {
			a["addressing_mode"] = string(types.AddressingModeLID)
		}
		return a
	case AddressPhone:
	}
	if group {
		return waBinary.Attrs{key: u.jid, "participant_lid": u.lid}
	}
	return waBinary.Attrs{key: u.jid, "sender_lid": u.lid}
}

// phoneDeviceLocked is the phone-number JID of a device named by its LID
// (lid:device@lid -> number:device@s.whatsapp.net), which is how the key
// directory files it; other JIDs are returned as they are.
func (s *Simulator) phoneDeviceLocked(dev types.JID) types.JID {
	if dev.Server != types.HiddenUserServer {
		return dev
	}
	u := s.lids[dev.User]
	if u == nil {
		return dev
	}
	pn := u.jid
	pn.Device = dev.Device
	return pn
}
