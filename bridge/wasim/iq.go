package wasim

import (
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// iqError makes the server answer <iq type="error"><error code text/></iq>.
type iqError struct {
	code int
	text string
}

var (
	errBadRequest     = &iqError{400, "bad-request"}
	errNotAuthorized  = &iqError{401, "not-authorized"}
	errForbidden      = &iqError{403, "forbidden"}
	errNotFound       = &iqError{404, "item-not-found"}
	errNotImplemented = &iqError{501, "feature-not-implemented"}
)

// answerIQ routes a client query by namespace and first child, and sends
// the answer: <iq type="result" id from> with content, or type="error".
func (s *Simulator) answerIQ(c *conn, iq *waBinary.Node) {
	content, iqErr := s.iqContent(c, iq)
	from := types.ServerJID
	if to, ok := iq.Attrs["to"].(types.JID); ok {
		from = to
	}
	reply := waBinary.Node{Tag: "iq", Attrs: waBinary.Attrs{"from": from, "type": "result", "id": iq.Attrs["id"]}, Content: content}
	if iqErr != nil {
		reply.Attrs["type"] = "error"
		reply.Content = []waBinary.Node{{Tag: "error", Attrs: waBinary.Attrs{"code": iqErr.code, "text": iqErr.text}}}
	}
	_ = c.send(reply)
}

func (s *Simulator) iqContent(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	xmlns, _ := iq.Attrs["xmlns"].(string)
	child := firstChildTag(iq)
	loggedIn := c.user != nil
	switch {
	case xmlns == "w:p":
		return nil, nil // keepalive ping
	case xmlns == "md" && child == "link_code_companion_reg":
		return s.handleLinkCode(c, iq)
	case !loggedIn:
		// Before login only pairing is possible.
		return nil, errNotAuthorized
	case xmlns == "md" && child == "remove-companion-device":
		return s.handleRemoveCompanion(c, iq)
	case xmlns == "usync":
		return s.answerUsync(c, iq)
	case xmlns == "encrypt":
		return s.answerEncrypt(c, iq)
	case xmlns == "w:m" && child == "media_conn":
		return s.answerMediaConn(), nil
	case xmlns == "w:g2" && child != "":
		return s.answerGroupIQ(c, iq)
	case xmlns == "w:profile:picture" && iq.Attrs["type"] == "set" && s.isOwnPicture(c, iq):
		return s.answerOwnPicture(c, iq)
	case xmlns == "w:profile:picture" && iq.Attrs["type"] == "set":
		return s.answerGroupPhoto(c, iq)
	case xmlns == "blocklist":
		return s.answerBlocklist(c, iq)
	case xmlns == "w:profile:picture" && iq.Attrs["type"] == "get":
		return s.answerProfilePicture(c, iq)
	case xmlns == "w:mex" && isSetAbout(iq):
		return s.answerSetAbout(c, iq)
	case xmlns == "privacy" && child == "privacy":
		return s.answerPrivacy(c), nil
	case xmlns == "w:sync:app:state" && child == "sync":
		return s.answerAppStateSync(c, iq)
	case xmlns == "w:mex" && child == "query":
		return s.answerMex(c, iq)
	case xmlns == "newsletter" && child != "":
		return s.answerNewsletter(c, iq)
	case xmlns == "status" && child == "privacy":
		return s.answerStatusPrivacy(c), nil
	}
	// passive/active, privacy, props, …: an empty result is a valid answer.
	s.log.Debugf("empty answer to iq xmlns=%s child=%s", xmlns, child)
	return nil, nil
}

func firstChildTag(n *waBinary.Node) string {
	if children := n.GetChildren(); len(children) > 0 {
		return children[0].Tag
	}
	return ""
}

// handleRemoveCompanion answers the client's own logout:
// <iq xmlns="md" type="set"><remove-companion-device jid reason/></iq>.
// The device is unlinked; its credentials stop working.
func (s *Simulator) handleRemoveCompanion(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	jid, _ := iq.GetChildByTag("remove-companion-device").Attrs["jid"].(types.JID)
	if jid.User != c.device.User || jid.Device != c.device.Device {
		return nil, errForbidden
	}
	s.unlink(c.user, c.device.Device)
	return nil, nil
}
