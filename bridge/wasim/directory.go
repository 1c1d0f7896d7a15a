package wasim

import (
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// answerUsync answers user-sync queries. whatsmeow sends two kinds:
//
// Device lists (GetUserDevices, before every send to someone new):
//
//	<usync context="message"><query><devices version="2"/></query><list><user jid/>…</list></usync>
//	-> <usync><list><user jid><devices><device-list><device id/>…</device-list></devices></user></list></usync>
//
// User info (GetUserInfo, before the first send to a number whose LID the
// client does not know): the same with <lid/> among the protocols, answered
// <lid val="…@lid"/>.
//
// Registration checks (IsOnWhatsApp):
//
//	<usync><query><contact addressing_mode="lid"/>…</query><list><user><contact>+49…@c.us</contact></user></list></usync>
//	-> <user jid="…@lid" pn_jid><contact type="in">query</contact></user> (registered)
//	-> <user jid><contact type="out">query</contact></user>               (not)
//
// The asking device is left out of its own account's device list, as
// WhatsApp does. Unknown numbers have no devices and are "out".
func (s *Simulator) answerUsync(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	q, ok := iq.GetOptionalChildByTag("usync")
	if !ok {
		return nil, errBadRequest
	}
	query := q.GetChildByTag("query")
	wantDevices := hasChild(&query, "devices")
	wantContact := hasChild(&query, "contact")
	// Current clients ask in LID addressing: a registered number is then
	// answered by its LID, the number beside it (pn_jid).
	contactNode, _ := query.GetOptionalChildByTag("contact")
	lidAddressing := contactNode.Attrs["addressing_mode"] == "lid"
	if wantDevices && s.takeSendFault(c.user, faultUsync) {
		return nil, &iqError{500, "internal-server-error"}
	}
	if wantContact {
		s.recordContactQuery()
	}
	list := q.GetChildByTag("list")
	var users []waBinary.Node
	for _, entry := range list.GetChildren() {
		if entry.Tag != "user" {
			continue
		}
		jid, hasJID := entry.Attrs["jid"].(types.JID)
		contactQuery, _ := entry.GetChildByTag("contact").Content.([]byte)
		if !hasJID {
			if contactQuery == nil {
				continue
			}
			jid = types.NewJID(normalizeNumber(string(contactQuery)), types.DefaultUserServer)
		}
		if wantContact {
			s.recordContactQuestion(jid.User)
		}
		jid = jid.ToNonAD()
		s.mu.Lock()
		u := s.userByJIDLocked(jid)
		var devices []types.JID
		if u != nil {
			devices = u.deviceJIDsLocked(c.device)
		}
		children := s.profileChildrenLocked(&query, u)
		s.mu.Unlock()
		if wantDevices {
			deviceNodes := make([]waBinary.Node, 0, len(devices))
			for _, d := range devices {
				// Device ids must be int: the binary encoder rejects uint16.
				deviceNodes = append(deviceNodes, waBinary.Node{Tag: "device", Attrs: waBinary.Attrs{"id": int(d.Device)}})
			}
			children = append(children, waBinary.Node{Tag: "devices", Content: []waBinary.Node{
				{Tag: "device-list", Content: deviceNodes},
			}})
		}
		if wantContact {
			state := "out"
			if u != nil {
				state = "in"
			}
			children = append(children, waBinary.Node{Tag: "contact", Attrs: waBinary.Attrs{"type": state}, Content: contactQuery})
		}
		if hasChild(&query, "lid") && u != nil {
			// Current clients address direct messages to the LID, and learn
			// it from this answer when no message taught it (GetUserInfo).
			children = append(children, waBinary.Node{Tag: "lid", Attrs: waBinary.Attrs{"val": u.lid}})
		}
		if hasChild(&query, "business") {
			children = append(children, waBinary.Node{Tag: "business"})
		}
		userAttrs := waBinary.Attrs{"jid": jid}
		if wantContact && lidAddressing && u != nil {
			userAttrs = waBinary.Attrs{"jid": u.lid, "pn_jid": jid}
		}
		users = append(users, waBinary.Node{Tag: "user", Attrs: userAttrs, Content: children})
	}
	return []waBinary.Node{{
		Tag:     "usync",
		Attrs:   waBinary.Attrs{"sid": q.Attrs["sid"], "mode": q.Attrs["mode"], "context": q.Attrs["context"], "index": "0", "last": "true"},
		Content: []waBinary.Node{{Tag: "list", Content: users}},
	}}, nil
}

func hasChild(n *waBinary.Node, tag string) bool {
	_, ok := n.GetOptionalChildByTag(tag)
	return ok
}

// answerEncrypt handles the xmlns="encrypt" queries:
//   - get <count/>: how many one-time prekeys of the client the server holds;
//   - set <registration/><type/><identity/><list/><skey/>: the client's prekey upload;
//   - get <key><user jid reason="identity"/>…</key>: prekey bundles, one
//     one-time prekey each.
func (s *Simulator) answerEncrypt(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	switch {
	case hasChild(iq, "count"):
		return []waBinary.Node{{Tag: "count", Attrs: waBinary.Attrs{"value": s.directory.oneTimeCount(c.device)}}}, nil
	case hasChild(iq, "registration") && iq.Attrs["type"] == "set":
		keys, err := parseKeyUpload(iq)
		if err != nil {
			s.log.Warnf("bad prekey upload from %s: %v", c.device, err)
			return nil, errBadRequest
		}
		s.mu.Lock()
		comp := c.user.companions[c.device.Device]
		valid := comp != nil && comp.identityKey == keys.identity
		s.mu.Unlock()
		if !valid {
			// The identity must be the one the phone signed when linking.
			return nil, errForbidden
		}
		s.directory.publish(c.device, keys)
		return nil, nil
	case hasChild(iq, "key"):
		req := iq.GetChildByTag("key")
		var users []waBinary.Node
		for _, entry := range req.GetChildren() {
			jid, ok := entry.Attrs["jid"].(types.JID)
			if entry.Tag != "user" || !ok {
				continue
			}
			s.mu.Lock()
			filed := s.phoneDeviceLocked(jid) // a device asked for by its LID
			s.mu.Unlock()
			if keys, oneTime, ok := s.directory.take(filed); ok {
				users = append(users, keys.bundleNode(jid, oneTime))
			} else {
				users = append(users, waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": jid}, Content: []waBinary.Node{
					{Tag: "error", Attrs: waBinary.Attrs{"code": 404, "text": "item-not-found"}},
				}})
			}
		}
		return []waBinary.Node{{Tag: "list", Content: users}}, nil
	}
	return nil, errNotImplemented
}
