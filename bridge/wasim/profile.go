package wasim

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Profiles, as WhatsApp answers about a user (whatsmeow's user.go reads
// them): the about text and the picture's id in a usync query's <status>
// and <picture>, the picture's URL in
//
//	<iq xmlns="w:profile:picture" type="get" target=jid><picture type query="url" id?/></iq>
//	-> <picture id url direct_path type/>, 404 when none is set, <picture status="304"/> when id is current
//
// A user who changes its picture or about text is announced to the other
// users' linked devices: <notification type="picture"><set jid id/></notification>
// and <notification type="status" from=jid><set>text</set></notification>.

// profileBook is every user's profile; guarded by s.mu.
type profileBook struct {
	about    map[*User]string
	pictures map[*User]string // the picture's id; the simulator keeps no image
	next     int
}

// pictureHost serves the pictures' URLs (never fetched in the simulator).
const pictureHost = "https://pps.whatsapp.net"

// SetAbout sets u's about text; the other users' devices hear it.
func (u *User) SetAbout(text string) {
	s := u.sim
	s.mu.Lock()
	if s.profiles.about == nil {
		s.profiles.about = map[*User]string{}
	}
	s.profiles.about[u] = text
	s.mu.Unlock()
	s.announceProfile(u, waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": u.jid, "type": "status", "id": randomBase64(9), "t": time.Now().Unix(),
	}, Content: []waBinary.Node{{Tag: "set", Content: []byte(text)}}})
}

// SetPicture gives u a new profile picture (removed: none); the other
// users' devices hear it. It returns the picture's id.
func (u *User) SetPicture(removed bool) string {
	s := u.sim
	s.mu.Lock()
	if s.profiles.pictures == nil {
		s.profiles.pictures = map[*User]string{}
	}
	s.profiles.next++
	id := strconv.FormatInt(time.Now().Unix(), 10) + strconv.Itoa(s.profiles.next)
	change := waBinary.Node{Tag: "set", Attrs: waBinary.Attrs{"jid": u.jid, "id": id}}
	if removed {
		delete(s.profiles.pictures, u)
		id, change = "", waBinary.Node{Tag: "delete", Attrs: waBinary.Attrs{"jid": u.jid}}
	} else {
		s.profiles.pictures[u] = id
	}
	s.mu.Unlock()
	s.announceProfile(u, waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": u.jid, "type": "picture", "id": randomBase64(9), "t": time.Now().Unix(),
	}, Content: []waBinary.Node{change}})
	return id
}

// announceProfile delivers a profile notification of u to every other
// user's linked devices.
func (s *Simulator) announceProfile(u *User, note waBinary.Node) {
	s.mu.Lock()
	others := make([]*User, 0, len(s.users))
	for _, o := range s.users {
		if o != u {
			others = append(others, o)
		}
	}
	s.mu.Unlock()
	for _, o := range others {
		for _, comp := range s.companionsOf(o) {
			s.deliver(o, comp, note)
		}
	}
}

// profileChildrenLocked are the <status> and <picture> of u that a usync
// query asks for.
func (s *Simulator) profileChildrenLocked(query *waBinary.Node, u *User) []waBinary.Node {
	if u == nil {
		return nil
	}
	var out []waBinary.Node
	if hasChild(query, "status") {
		about := s.profiles.about[u]
		out = append(out, waBinary.Node{Tag: "status", Attrs: waBinary.Attrs{"t": time.Now().Unix()}, Content: []byte(about)})
	}
	if hasChild(query, "picture") {
		attrs := waBinary.Attrs{}
		if id := s.profiles.pictures[u]; id != "" {
			attrs["id"] = id
		}
		out = append(out, waBinary.Node{Tag: "picture", Attrs: attrs})
	}
	return out
}

// answerProfilePicture answers a picture URL query about a user.
func (s *Simulator) answerProfilePicture(_ *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	target, _ := iq.Attrs["target"].(types.JID)
	pic, ok := iq.GetOptionalChildByTag("picture")
	if !ok {
		return nil, errBadRequest
	}
	s.mu.Lock()
	u := s.userByJIDLocked(target.ToNonAD())
	id := s.profiles.pictures[u]
	s.mu.Unlock()
	if u == nil || id == "" {
		return nil, errNotFound
	}
	if known, _ := pic.Attrs["id"].(string); known == id {
		return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{"status": "304"}}}, nil
	}
	path := "/v/t61.24694-24/" + id + ".jpg?oe=" + strconv.FormatInt(time.Now().Add(14*24*time.Hour).Unix(), 16)
	return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{
		"id": id, "type": pic.Attrs["type"], "url": pictureHost + path, "direct_path": path,
		"hash": base64.StdEncoding.EncodeToString([]byte(id)),
	}}}, nil
}

// apiProfile answers POST /v1/users/{number}/profile {about?, picture?}:
// the user changes its about text, or its picture ("new" or "none"); the
// other users' linked devices hear it. It answers the picture's id.
func (s *Simulator) apiProfile(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		About   *string `json:"about"`
		Picture string  `json:"picture"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.About == nil && req.Picture == "" || req.Picture != "" && req.Picture != "new" && req.Picture != "none" {
		writeError(w, badRequest(`give about (a text) or picture ("new" or "none")`))
		return
	}
	if req.About != nil {
		u.SetAbout(*req.About)
	}
	answer := map[string]string{}
	if req.Picture != "" {
		answer["picture_id"] = u.SetPicture(req.Picture == "none")
	}
	writeJSON(w, http.StatusOK, answer)
}

// mexSetAbout is the query id of the about text's change (whatsmeow's
// SetStatusMessage, a GraphQL mutation in a w:mex IQ).
const mexSetAbout = "9152604461510864"

// isSetAbout reports whether a w:mex IQ changes the about text.
func isSetAbout(iq *waBinary.Node) bool {
	q, ok := iq.GetOptionalChildByTag("query")
	return ok && q.Attrs["query_id"] == mexSetAbout
}

// answerSetAbout sets the about text of the device's user, as its other
// devices and contacts then see it.
func (s *Simulator) answerSetAbout(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	q := iq.GetChildByTag("query")
	body, _ := q.Content.([]byte)
	var req struct {
		Variables struct {
			Input struct {
				Text *string `json:"text"`
			} `json:"input"`
		} `json:"variables"`
	}
	if json.Unmarshal(body, &req) != nil || req.Variables.Input.Text == nil {
		return nil, errBadRequest
	}
	c.user.SetAbout(*req.Variables.Input.Text)
	result, _ := json.Marshal(map[string]any{"data": map[string]any{"xwa2_text_status_update": map[string]any{"success": true}}})
	return []waBinary.Node{{Tag: "result", Content: result}}, nil
}

// About is the user's about text.
func (u *User) About() string {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	return u.sim.profiles.about[u]
}

// Picture is the id of the user's profile picture; empty when none is set.
func (u *User) Picture() string {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	return u.sim.profiles.pictures[u]
}

// isOwnPicture reports whether a w:profile:picture set names the device's
// own user (its profile picture) rather than a group.
func (s *Simulator) isOwnPicture(c *conn, iq *waBinary.Node) bool {
	target, _ := iq.Attrs["target"].(types.JID)
	return target.ToNonAD() == c.user.jid || target.ToNonAD() == c.user.lid
}

// answerOwnPicture sets (or, without a picture, removes) the device's
// user's profile picture: a JPEG, as WhatsApp takes only those.
func (s *Simulator) answerOwnPicture(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	pic, ok := iq.GetOptionalChildByTag("picture")
	if !ok {
		c.user.SetPicture(true)
		return nil, nil
	}
	data, _ := pic.Content.([]byte)
	if len(data) < 3 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF {
		return nil, &iqError{406, "not-acceptable"}
	}
	id := c.user.SetPicture(false)
	return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{"id": id}}}, nil
}

// answerPrivacy answers the privacy settings' query: WhatsApp's defaults,
// but who may add the user to groups, as the user set it.
func (s *Simulator) answerPrivacy(c *conn) []waBinary.Node {
	s.mu.Lock()
	groupAdd := "all"
	if c.user.refusesGroupAdds {
		groupAdd = "contacts"
	}
	s.mu.Unlock()
	settings := [][2]string{{"groupadd", groupAdd}, {"last", "all"}, {"status", "contacts"}, {"profile", "all"},
		{"readreceipts", "all"}, {"online", "all"}, {"calladd", "all"}, {"messages", "all"}}
	categories := make([]waBinary.Node, 0, len(settings))
	for _, kv := range settings {
		categories = append(categories, waBinary.Node{Tag: "category", Attrs: waBinary.Attrs{"name": kv[0], "value": kv[1]}})
	}
	return []waBinary.Node{{Tag: "privacy", Content: categories}}
}
