package wasim

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow/appstate"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/proto/waServerSync"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// App state, as WhatsApp keeps it for an account and its phone shares it
// with linked devices (whatsmeow's appstate.go reads it). The server keeps
// each collection (regular, regular_high, …) as numbered patches it cannot
// read: they are encrypted with app state sync keys the phone shares with
// its devices in a protocol message. A device fetches what it lacks,
//
//	<iq xmlns="w:sync:app:state" type="set"><sync><collection name version|return_snapshot/></sync></iq>
//	-> <sync><collection name version><patches><patch>SyncdPatch</patch>…</patches></collection></sync>
//
// and uploads a change as the next version (<collection name version><patch/></collection>;
// a version behind is refused with 409 and the patches it missed); the
// server then tells the account's other devices with
// <notification type="server_sync"><collection name version/></notification>.
//
// The simulated phone is a device like any: it reads every patch with its
// own appstate.Processor (so its hash state matches the devices') and
// writes its own changes (labels) as patches.

// appState is one user's app state: the server's collections and the
// phone's view of them. Its own lock: the phone decodes patches while the
// simulator's lock is free.
type appState struct {
	mu          sync.Mutex
	collections map[appstate.WAPatchName][][]byte // marshalled SyncdPatch, index = version-1
	keyID       []byte                            // the phone's sync key, once shared
	phone       *appstate.Processor
	mem         *memAppState
	// labels are the phone's labels and associations, from every patch.
	labels []appstate.Mutation
}

// appStateOf is u's app state, made on first use.
func (u *User) appStateOf() *appState {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	if u.appState == nil {
		mem := &memAppState{keys: map[string]store.AppStateSyncKey{}, versions: map[string]store.AppStateMutationMAC{},
			hashes: map[string]appstate.HashState{}}
		u.appState = &appState{collections: map[appstate.WAPatchName][][]byte{}, mem: mem,
			phone: appstate.NewProcessor(&store.Device{AppStateKeys: mem, AppState: mem}, u.sim.log.Sub("appstate"))}
	}
	return u.appState
}

// ShareAppStateKeys makes the phone share its app state sync key with the
// user's linked devices, as a phone does after linking: a protocol message
// (APP_STATE_SYNC_KEY_SHARE) from the phone to each device, which then
// fetches every collection. Until then a device can neither read nor write
// app state (whatsmeow: "no app state keys found").
func (u *User) ShareAppStateKeys(ctx context.Context) error {
	as := u.appStateOf()
	as.mu.Lock()
	if as.keyID == nil {
		as.keyID = make([]byte, 6)
		data := make([]byte, 32)
		_, _ = rand.Read(as.keyID)
		_, _ = rand.Read(data)
		as.mem.keys[string(as.keyID)] = store.AppStateSyncKey{Data: data, Fingerprint: []byte{}, Timestamp: time.Now().UnixMilli()}
	}
	key := as.mem.keys[string(as.keyID)]
	keyID := as.keyID
	as.mu.Unlock()
	share := &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_APP_STATE_SYNC_KEY_SHARE.Enum(),
		AppStateSyncKeyShare: &waE2E.AppStateSyncKeyShare{Keys: []*waE2E.AppStateSyncKey{{
			KeyID: &waE2E.AppStateSyncKeyId{KeyID: keyID},
			KeyData: &waE2E.AppStateSyncKeyData{KeyData: key.Data, Timestamp: proto.Int64(key.Timestamp),
				Fingerprint: &waE2E.AppStateSyncKeyFingerprint{RawID: proto.Uint32(1), CurrentIndex: proto.Uint32(0)}},
		}}},
	}}
	return u.sendToOwnDevices(ctx, share)
}

// sendToOwnDevices sends msg from the phone to each of the user's linked
// devices (a peer message).
func (u *User) sendToOwnDevices(ctx context.Context, msg *waE2E.Message) error {
	plaintext, err := proto.Marshal(msg)
	if err != nil {
		return err
	}
	id := newMessageID()
	for _, comp := range u.sim.companionsOf(u) {
		encType, ciphertext, err := u.encryptFor(ctx, comp.jid, plaintext)
		if err != nil {
			return err
		}
		u.sim.deliver(u, comp, waBinary.Node{Tag: "message", Attrs: waBinary.Attrs{"from": u.jid, "to": comp.jid.ToNonAD(),
			"id": id, "type": "text", "category": "peer", "t": time.Now().Unix()},
			Content: []waBinary.Node{encNode(encType, "", ciphertext)}})
	}
	return nil
}

// errAppStateConflict: an upload for a version the server is past.
var errAppStateConflict = errors.New("wasim: app state version conflict")

// store appends an uploaded (or the phone's) patch as the collection's next
// version, which must follow version; the phone reads it. It returns the
// new version.
func (as *appState) store(ctx context.Context, name appstate.WAPatchName, version uint64, raw []byte) (uint64, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if version != uint64(len(as.collections[name])) {
		return 0, errAppStateConflict
	}
	var patch waServerSync.SyncdPatch
	if err := proto.Unmarshal(raw, &patch); err != nil {
		return 0, err
	}
	version++
	patch.Version = &waServerSync.SyncdVersion{Version: proto.Uint64(version)}
	stored, err := proto.Marshal(&patch)
	if err != nil {
		return 0, err
	}
	as.collections[name] = append(as.collections[name], stored)
	as.phoneReads(ctx, name, &patch)
	return version, nil
}

// phoneReads applies a stored patch to the phone's view; a patch it cannot
// read (a key it never had) is skipped, as the phone would ask for it.
func (as *appState) phoneReads(ctx context.Context, name appstate.WAPatchName, patch *waServerSync.SyncdPatch) {
	if as.keyID == nil {
		return
	}
	state := as.mem.hashes[string(name)]
	muts, next, err := as.phone.DecodePatches(ctx, &appstate.PatchList{Name: name, Patches: []*waServerSync.SyncdPatch{patch}}, state, true)
	if err != nil {
		return
	}
	as.mem.hashes[string(name)] = next
	for _, m := range muts {
		if len(m.Index) > 0 && (m.Index[0] == appstate.IndexLabelEdit || m.Index[0] == appstate.IndexLabelAssociationChat ||
			m.Index[0] == appstate.IndexLabelAssociationMessage) {
			as.labels = append(as.labels, m)
		}
	}
}

// since are the collection's patches after version.
func (as *appState) since(name appstate.WAPatchName, version uint64) ([][]byte, uint64) {
	as.mu.Lock()
	defer as.mu.Unlock()
	all := as.collections[name]
	if version > uint64(len(all)) {
		version = uint64(len(all))
	}
	return slices.Clone(all[version:]), uint64(len(all))
}

// answerAppStateSync answers a device's sync IQ: a fetch per collection,
// or an upload of a patch.
func (s *Simulator) answerAppStateSync(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	sync := iq.GetChildByTag("sync")
	as := c.user.appStateOf()
	var out []waBinary.Node
	var changed []waBinary.Node
	for _, coll := range sync.GetChildrenByTag("collection") {
		ag := coll.AttrGetter()
		name := appstate.WAPatchName(ag.String("name"))
		version, _ := ag.GetUint64("version", false)
		if ag.OptionalBool("return_snapshot") {
			version = 0
		}
		if patch, ok := coll.GetOptionalChildByTag("patch"); ok {
			raw, _ := patch.Content.([]byte)
			v, err := as.store(s.ctx, name, version, raw)
			if err != nil {
				out = append(out, conflictCollection(as, name, version))
				continue
			}
			out = append(out, waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": string(name), "version": v}})
			changed = append(changed, waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": string(name), "version": v}})
			continue
		}
		out = append(out, patchesCollection(as, name, version))
	}
	if len(changed) > 0 {
		s.notifyAppState(c.user, c, changed)
	}
	return []waBinary.Node{{Tag: "sync", Content: out}}, nil
}

// patchesCollection answers a fetch: the patches after version.
func patchesCollection(as *appState, name appstate.WAPatchName, version uint64) waBinary.Node {
	patches, current := as.since(name, version)
	nodes := make([]waBinary.Node, 0, len(patches))
	for _, p := range patches {
		nodes = append(nodes, waBinary.Node{Tag: "patch", Content: p})
	}
	return waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": string(name), "version": current, "has_more_patches": false},
		Content: []waBinary.Node{{Tag: "patches", Content: nodes}}}
}

// conflictCollection refuses an upload for a version the server is past,
// with the patches the device missed.
func conflictCollection(as *appState, name appstate.WAPatchName, version uint64) waBinary.Node {
	n := patchesCollection(as, name, version)
	n.Attrs["type"] = "error"
	n.Content = append([]waBinary.Node{{Tag: "error", Attrs: waBinary.Attrs{"code": 409, "text": "conflict"}}}, n.Content.([]waBinary.Node)...)
	return n
}

// notifyAppState tells the user's devices (but except's) that collections
// changed.
func (s *Simulator) notifyAppState(u *User, except *conn, collections []waBinary.Node) {
	n := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{"from": types.ServerJID, "type": "server_sync",
		"id": randomBase64(8), "t": time.Now().Unix()}, Content: collections}
	for _, comp := range s.companionsOf(u) {
		if except == nil || comp.conn != except {
			s.deliver(u, comp, n)
		}
	}
}

// changeAppState is a change made on the phone: encoded with its key,
// stored as the collection's next version, announced to its devices.
func (u *User) changeAppState(ctx context.Context, patch appstate.PatchInfo) error {
	as := u.appStateOf()
	as.mu.Lock()
	keyID := as.keyID
	state := as.mem.hashes[string(patch.Type)]
	as.mu.Unlock()
	if keyID == nil {
		if err := u.ShareAppStateKeys(ctx); err != nil {
			return err
		}
		return u.changeAppState(ctx, patch)
	}
	raw, err := as.phone.EncodePatch(ctx, keyID, state, patch)
	if err != nil {
		return err
	}
	v, err := as.store(ctx, patch.Type, state.Version, raw)
	if err != nil {
		return err
	}
	u.sim.notifyAppState(u, nil, []waBinary.Node{{Tag: "collection", Attrs: waBinary.Attrs{"name": string(patch.Type), "version": v}}})
	return nil
}

// EditLabel creates, renames or (deleted) deletes a label on the phone.
func (u *User) EditLabel(ctx context.Context, id, name string, color int32, deleted bool) error {
	return u.changeAppState(ctx, appstate.BuildLabelEdit(id, name, color, deleted))
}

// LabelChat applies (or removes) a label to a chat on the phone.
func (u *User) LabelChat(ctx context.Context, id string, chat types.JID, labeled bool) error {
	return u.changeAppState(ctx, appstate.BuildLabelChat(chat, id, labeled))
}

// LabelMessage applies (or removes) a label to a message on the phone.
func (u *User) LabelMessage(ctx context.Context, id string, chat types.JID, messageID string, labeled bool) error {
	return u.changeAppState(ctx, appstate.BuildLabelMessage(chat, id, messageID, labeled))
}

// LabelChange is a label change the phone read from app state: an edit
// (Name, Color, Deleted) or an association (Chat, Message, Labeled).
type LabelChange struct {
	Label   string `json:"label"`
	Name    string `json:"name,omitempty"`
	Color   int32  `json:"color,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
	Chat    string `json:"chat,omitempty"`
	Message string `json:"message,omitempty"`
	Labeled bool   `json:"labeled,omitempty"`
}

// LabelChanges are the label changes in the user's app state, from any of
// its devices, oldest first, as the phone read them.
func (u *User) LabelChanges() []LabelChange {
	as := u.appStateOf()
	as.mu.Lock()
	defer as.mu.Unlock()
	out := make([]LabelChange, 0, len(as.labels))
	for _, m := range as.labels {
		c := LabelChange{Label: m.Index[1]}
		if e := m.Action.GetLabelEditAction(); e != nil {
			c.Name, c.Color, c.Deleted = e.GetName(), e.GetColor(), e.GetDeleted()
		} else {
			c.Chat, c.Labeled = m.Index[2], m.Action.GetLabelAssociationAction().GetLabeled()
			if m.Index[0] == appstate.IndexLabelAssociationMessage {
				c.Message = m.Index[3]
			}
		}
		out = append(out, c)
	}
	return out
}

// WaitLabelChanges waits until the phone read n label changes.
func (u *User) WaitLabelChanges(ctx context.Context, n int) ([]LabelChange, error) {
	for {
		if got := u.LabelChanges(); len(got) >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return u.LabelChanges(), ctx.Err()
		case <-time.After(10 * time.Millisecond): // app state has no change signal of its own
		}
	}
}

// apiLabels: POST /v1/users/{number}/labels {action, label, name?, color?,
// chat?, message?, labeled?}: the user's phone changes a label (edit,
// delete, chat, message); the linked devices hear it through app state.
func (s *Simulator) apiLabels(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		Action  string `json:"action"`
		Label   string `json:"label"`
		Name    string `json:"name"`
		Color   int32  `json:"color"`
		Chat    string `json:"chat"`
		Message string `json:"message"`
		Labeled *bool  `json:"labeled"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Label == "" {
		writeError(w, badRequest("label (the label's id) is required"))
		return
	}
	labeled := req.Labeled == nil || *req.Labeled
	chat, chatErr := parseChat(req.Chat)
	var err error
	switch {
	case req.Action == "edit" && req.Name != "":
		err = u.EditLabel(r.Context(), req.Label, req.Name, req.Color, false)
	case req.Action == "delete":
		err = u.EditLabel(r.Context(), req.Label, req.Name, req.Color, true)
	case req.Action == "chat" && chatErr == nil:
		err = u.LabelChat(r.Context(), req.Label, chat, labeled)
	case req.Action == "message" && chatErr == nil && req.Message != "":
		err = u.LabelMessage(r.Context(), req.Label, chat, req.Message, labeled)
	default:
		err = badRequest("action must be edit (with name), delete, chat (with chat) or message (with chat and message)")
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, u.LabelChanges())
}

// apiShareAppStateKeys: POST /v1/users/{number}/app-state-keys: the phone
// shares its app state key with its linked devices.
func (s *Simulator) apiShareAppStateKeys(w http.ResponseWriter, r *http.Request, u *User) {
	if err := u.ShareAppStateKeys(r.Context()); err != nil {
		writeError(w, fmt.Errorf("share app state keys: %w", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"shared": true})
}

// memAppState is the phone's key and hash store, in memory.
type memAppState struct {
	keys     map[string]store.AppStateSyncKey
	versions map[string]store.AppStateMutationMAC // by collection name + index MAC
	hashes   map[string]appstate.HashState
}

func (m *memAppState) PutAppStateSyncKey(_ context.Context, id []byte, key store.AppStateSyncKey) error {
	m.keys[string(id)] = key
	return nil
}

func (m *memAppState) GetAppStateSyncKey(_ context.Context, id []byte) (*store.AppStateSyncKey, error) {
	if k, ok := m.keys[string(id)]; ok {
		return &k, nil
	}
	return nil, nil //nolint:nilnil // whatsmeow's contract: no key is nil, nil
}

func (m *memAppState) GetLatestAppStateSyncKeyID(context.Context) ([]byte, error) {
	for id := range m.keys {
		return []byte(id), nil
	}
	return nil, nil
}

func (m *memAppState) GetAllAppStateSyncKeys(context.Context) ([]*store.AppStateSyncKey, error) {
	out := make([]*store.AppStateSyncKey, 0, len(m.keys))
	for _, k := range m.keys {
		out = append(out, &k)
	}
	return out, nil
}

func (m *memAppState) PutAppStateVersion(_ context.Context, name string, version uint64, hash [128]byte) error {
	m.hashes[name] = appstate.HashState{Version: version, Hash: hash}
	return nil
}

func (m *memAppState) GetAppStateVersion(_ context.Context, name string) (uint64, [128]byte, error) {
	h := m.hashes[name]
	return h.Version, h.Hash, nil
}

func (m *memAppState) DeleteAppStateVersion(_ context.Context, name string) error {
	delete(m.hashes, name)
	return nil
}

func (m *memAppState) PutAppStateMutationMACs(_ context.Context, name string, _ uint64, muts []store.AppStateMutationMAC) error {
	for _, mut := range muts {
		m.versions[name+"\x00"+string(mut.IndexMAC)] = mut
	}
	return nil
}

func (m *memAppState) DeleteAppStateMutationMACs(_ context.Context, name string, indexMACs [][]byte) error {
	for _, mac := range indexMACs {
		delete(m.versions, name+"\x00"+string(mac))
	}
	return nil
}

func (m *memAppState) GetAppStateMutationMAC(_ context.Context, name string, indexMAC []byte) ([]byte, error) {
	if mut, ok := m.versions[name+"\x00"+string(indexMAC)]; ok && bytes.Equal(mut.IndexMAC, indexMAC) {
		return mut.ValueMAC, nil
	}
	return nil, nil
}
