package wasim

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// ControlHandler serves the simulator's HTTP control API (JSON), used by
// the standalone process and by end-to-end tests in other processes. See
// README.md for the endpoints. It has no authentication: bind it to
// loopback.
func (s *Simulator) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", s.apiInfo)
	mux.HandleFunc("GET /v1/client-version", s.apiClientVersion)
	mux.HandleFunc("PUT /v1/client-version", s.apiSetClientVersion)
	mux.HandleFunc("PUT /v1/trusted-contact-tokens", s.apiTrustedContactTokens)
	mux.HandleFunc("GET /v1/users", s.apiListUsers)
	mux.HandleFunc("POST /v1/users", s.apiCreateUser)
	mux.HandleFunc("GET /v1/users/{number}", s.withUser(s.apiGetUser))
	mux.HandleFunc("POST /v1/users/{number}/scan", s.withUser(s.apiScan))
	mux.HandleFunc("POST /v1/users/{number}/code", s.withUser(s.apiCode))
	mux.HandleFunc("POST /v1/users/{number}/messages", s.withUser(s.apiSend))
	mux.HandleFunc("GET /v1/users/{number}/received", s.withUser(s.apiReceived))
	mux.HandleFunc("GET /v1/users/{number}/chatstates", s.withUser(s.apiChatStates))
	mux.HandleFunc("POST /v1/users/{number}/receipts", s.withUser(s.apiReceipt))
	mux.HandleFunc("POST /v1/users/{number}/votes", s.withUser(s.apiVote))
	mux.HandleFunc("POST /v1/users/{number}/taps", s.withUser(s.apiTap))
	mux.HandleFunc("POST /v1/users/{number}/receipt-mode", s.withUser(s.apiReceiptMode))
	mux.HandleFunc("POST /v1/users/{number}/faults", s.withUser(s.apiFault))
	mux.HandleFunc("POST /v1/users/{number}/calls", s.withUser(s.apiCall))
	mux.HandleFunc("GET /v1/users/{number}/blocks", s.withUser(s.apiBlocks))
	mux.HandleFunc("POST /v1/users/{number}/blocks", s.withUser(s.apiBlocks))
	mux.HandleFunc("POST /v1/users/{number}/profile", s.withUser(s.apiProfile))
	mux.HandleFunc("POST /v1/users/{number}/addressing", s.withUser(s.apiAddressing))
	mux.HandleFunc("GET /v1/users/{number}/ticks", s.withUser(s.apiTicks))
	mux.HandleFunc("POST /v1/users/{number}/status", s.withUser(s.apiPostStatus))
	mux.HandleFunc("GET /v1/groups", s.apiListGroups)
	mux.HandleFunc("POST /v1/groups", s.apiCreateGroup)
	mux.HandleFunc("POST /v1/groups/{jid}/members", s.withGroup(s.apiGroupMembers))
	mux.HandleFunc("POST /v1/groups/{jid}/subject", s.withGroup(s.apiGroupSubject))
	mux.HandleFunc("POST /v1/users/{number}/group-privacy", s.withUser(s.apiGroupPrivacy))
	mux.HandleFunc("POST /v1/users/{number}/labels", s.withUser(s.apiLabels))
	mux.HandleFunc("POST /v1/users/{number}/app-state-keys", s.withUser(s.apiShareAppStateKeys))
	mux.HandleFunc("GET /v1/channels", s.apiListChannels)
	mux.HandleFunc("POST /v1/channels", s.apiCreateChannel)
	mux.HandleFunc("POST /v1/channels/{jid}/posts", s.apiChannelPost)
	return mux
}

// apiTimeout bounds linking and sending requests.
const apiTimeout = 60 * time.Second

// maxAPIBody bounds request bodies (media is sent base64-encoded).
const maxAPIBody = 64 << 20

type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes the project's error shape: {"error":{"code","message"}}.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, ErrUnknownQR), errors.Is(err, ErrNoPendingCode):
		ae = &apiError{http.StatusNotFound, "not_found", err.Error()}
	case errors.Is(err, ErrBadQR), errors.Is(err, ErrWrongCode):
		ae = &apiError{http.StatusBadRequest, "bad_request", err.Error()}
	case errors.Is(err, ErrNoDevices), errors.Is(err, ErrPairingRejected):
		ae = &apiError{http.StatusConflict, "conflict", err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		ae = &apiError{http.StatusGatewayTimeout, "timeout", err.Error()}
	default:
		ae = &apiError{http.StatusInternalServerError, "internal", err.Error()}
	}
	writeJSON(w, ae.status, map[string]any{"error": map[string]string{"code": ae.code, "message": ae.message}})
}

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid JSON body: %v", err)
	}
	return nil
}

func (s *Simulator) withUser(h func(http.ResponseWriter, *http.Request, *User)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.LookupUser(r.PathValue("number"))
		if !ok {
			writeError(w, &apiError{http.StatusNotFound, "not_found", "no user " + r.PathValue("number")})
			return
		}
		h(w, r, u)
	}
}

type infoJSON struct {
	Addr           string `json:"addr"`
	RootPublicKey  string `json:"root_public_key"`
	CertificatePEM string `json:"certificate_pem"`
}

func (s *Simulator) apiInfo(w http.ResponseWriter, _ *http.Request) {
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	writeJSON(w, http.StatusOK, infoJSON{Addr: s.Addr(), RootPublicKey: s.RootPublicKeyHex(), CertificatePEM: string(cert)})
}

type userJSON struct {
	Number      string   `json:"number"`
	Name        string   `json:"name"`
	JID         string   `json:"jid"`
	LID         string   `json:"lid"`
	Devices     []string `json:"devices"`
	Connected   []string `json:"connected"`
	ReceiptMode string   `json:"receipt_mode"`
}

var receiptModeNames = map[ReceiptMode]string{ReceiptsDelivered: "delivered", ReceiptsNone: "none", ReceiptsRead: "read"}

func parseReceiptMode(s string) (ReceiptMode, bool) {
	for m, name := range receiptModeNames {
		if name == s {
			return m, true
		}
	}
	return 0, false
}

func (u *User) toJSON() userJSON {
	u.sim.mu.Lock()
	mode := u.receipts
	u.sim.mu.Unlock()
	return userJSON{
		Number: u.Number(), Name: u.Name(), JID: u.jid.String(), LID: u.lid.String(),
		Devices: jidStrings(u.Devices()), Connected: jidStrings(u.Connected()), ReceiptMode: receiptModeNames[mode],
	}
}

func jidStrings(jids []types.JID) []string {
	out := make([]string, len(jids))
	for i, j := range jids {
		out[i] = j.String()
	}
	return out
}

func (s *Simulator) apiListUsers(w http.ResponseWriter, _ *http.Request) {
	users := s.Users()
	out := make([]userJSON, len(users))
	for i, u := range users {
		out[i] = u.toJSON()
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Simulator) apiCreateUser(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Number      string `json:"number"`
		Name        string `json:"name"`
		ReceiptMode string `json:"receipt_mode"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	mode, ok := parseReceiptMode(orDefault(req.ReceiptMode, "delivered"))
	if !ok {
		writeError(w, badRequest("receipt_mode must be none, delivered or read"))
		return
	}
	num := normalizeNumber(req.Number)
	if len(num) < 7 || len(num) > 15 {
		writeError(w, badRequest("number must be 7-15 digits with country code"))
		return
	}
	u := s.Contact(num, req.Name)
	u.SetReceiptMode(mode)
	writeJSON(w, http.StatusCreated, u.toJSON())
}

func (s *Simulator) apiGetUser(w http.ResponseWriter, _ *http.Request, u *User) {
	writeJSON(w, http.StatusOK, u.toJSON())
}

func (s *Simulator) apiScan(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		QR string `json:"qr"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	dev, err := u.ScanQR(ctx, req.QR)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"device": dev.String()})
}

func (s *Simulator) apiCode(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		Code string `json:"code"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	dev, err := u.EnterCode(ctx, req.Code)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"device": dev.String()})
}

type mediaJSON struct {
	Kind       string `json:"kind"`
	MimeType   string `json:"mimetype"`
	FileName   string `json:"file_name,omitempty"`
	Caption    string `json:"caption,omitempty"`
	DataBase64 string `json:"data_base64,omitempty"` // requests only
	PTT        bool   `json:"ptt,omitempty"`         // an audio recorded as a voice note
	Size       uint64 `json:"size"`                  // responses only
	SHA256     string `json:"sha256,omitempty"`      // responses only, hex of the decrypted file
	Error      string `json:"error,omitempty"`
}

// parseChat accepts a phone number or a JID (user or group).
func parseChat(to string) (types.JID, error) {
	if jid, err := types.ParseJID(to); err == nil && jid.User != "" && jid.Server != "" {
		return jid, nil
	}
	num := normalizeNumber(to)
	if len(num) < 7 || len(num) > 15 {
		return types.EmptyJID, badRequest("to must be a phone number or a JID, not %q", to)
	}
	return types.NewJID(num, types.DefaultUserServer), nil
}

func (s *Simulator) apiSend(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		To    string     `json:"to"`
		Text  string     `json:"text"`
		Media *mediaJSON `json:"media"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	to, err := parseChat(req.To)
	if err != nil {
		writeError(w, err)
		return
	}
	msg, err := u.requestMessage(req.Text, req.Media)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	id, err := u.Send(ctx, to, msg)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
}

// requestMessage is the message of a request's text, or of its media (with
// the text as caption when the media names none), uploaded.
func (u *User) requestMessage(text string, media *mediaJSON) (*waE2E.Message, error) {
	switch {
	case media != nil:
		data, err := base64.StdEncoding.DecodeString(media.DataBase64)
		if err != nil {
			return nil, badRequest("media.data_base64: %v", err)
		}
		msg, err := u.uploadAttachment(Attachment{
			Kind: media.Kind, Data: data, MimeType: media.MimeType,
			FileName: media.FileName, Caption: orDefault(media.Caption, text), PTT: media.PTT,
		})
		if err != nil && errors.Is(err, errBadAttachment) {
			err = badRequest("%v", err)
		}
		return msg, err
	case text != "":
		return &waE2E.Message{Conversation: proto.String(text)}, nil
	}
	return nil, badRequest("text or media is required")
}

type receivedJSON struct {
	Index     int        `json:"index"`
	ID        string     `json:"id"`
	Chat      string     `json:"chat"`
	Sender    string     `json:"sender"`
	EncType   string     `json:"enc_type"`
	Timestamp time.Time  `json:"timestamp"`
	Text      string     `json:"text"`
	Media     *mediaJSON `json:"media,omitempty"`
	Error     string     `json:"error,omitempty"`
	// What the phone shows beside or instead of the text.
	Quoted   *quotedJSON `json:"quoted,omitempty"`
	Mentions []string    `json:"mentions,omitempty"`
	Reaction *actionJSON `json:"reaction,omitempty"`
	Edit     *actionJSON `json:"edit,omitempty"`
	Revoke   *actionJSON `json:"revoke,omitempty"`
	Poll     *pollJSON   `json:"poll,omitempty"`
	// Buttons are the reply buttons the phone renders under the message.
	Buttons []ShownButton `json:"buttons,omitempty"`
}

// pollJSON is a poll as the phone shows it.
type pollJSON struct {
	Question        string   `json:"question"`
	Options         []string `json:"options"`
	SelectableCount uint32   `json:"selectable_count"`
}

// quotedJSON is the message a reply quotes, as the phone shows it above.
type quotedJSON struct {
	ID          string `json:"id"`
	Participant string `json:"participant,omitempty"`
	Kind        string `json:"kind"` // text, image, video, audio, document
	Text        string `json:"text,omitempty"`
}

// actionJSON is a reaction, edit or revoke: the message it acts on.
type actionJSON struct {
	Target string `json:"target"`
	Emoji  string `json:"emoji,omitempty"`
	Text   string `json:"text,omitempty"`
}

// conversationJSON adds what a received message does in the conversation.
func conversationJSON(rj *receivedJSON, m *Message) {
	if q := m.Quoted(); q != nil {
		rj.Quoted = &quotedJSON{ID: q.ID, Participant: q.Participant}
		rj.Quoted.Kind, rj.Quoted.Text = quotedKind(q.Message)
	}
	rj.Mentions = m.Mentions()
	if target, emoji, _, ok := m.Reaction(); ok {
		rj.Reaction = &actionJSON{Target: target, Emoji: emoji}
	}
	if target, text, ok := m.Edit(); ok {
		rj.Edit = &actionJSON{Target: target, Text: text}
	}
	if target, ok := m.Revoke(); ok {
		rj.Revoke = &actionJSON{Target: target}
	}
	rj.Buttons = m.Buttons()
	if p := m.Poll(); p != nil {
		rj.Poll = &pollJSON{Question: p.GetName(), SelectableCount: p.GetSelectableOptionsCount(), Options: []string{}}
		for _, o := range p.GetOptions() {
			rj.Poll.Options = append(rj.Poll.Options, o.GetOptionName())
		}
	}
}

// quotedKind is what a quote shows: its kind and text or caption.
func quotedKind(q *waE2E.Message) (kind, text string) {
	switch {
	case q.GetImageMessage() != nil:
		return "image", q.GetImageMessage().GetCaption()
	case q.GetVideoMessage() != nil:
		return "video", q.GetVideoMessage().GetCaption()
	case q.GetAudioMessage() != nil:
		return "audio", ""
	case q.GetDocumentMessage() != nil:
		return "document", q.GetDocumentMessage().GetCaption()
	case q.GetExtendedTextMessage() != nil:
		return "text", q.GetExtendedTextMessage().GetText()
	}
	return "text", q.GetConversation()
}

// apiReceived lists received messages; ?since=N skips the first N, so a
// poller can pass the last index + 1.
func (s *Simulator) apiReceived(w http.ResponseWriter, r *http.Request, u *User) {
	since := 0
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, badRequest("since must be a non-negative integer"))
			return
		}
		since = n
	}
	msgs := u.Received()
	out := []receivedJSON{}
	for i := since; i < len(msgs); i++ {
		m := msgs[i]
		rj := receivedJSON{Index: i, ID: m.ID, Chat: m.Chat.String(), Sender: m.Sender.String(), EncType: m.EncType, Timestamp: m.Timestamp}
		if m.Err != nil {
			rj.Error = m.Err.Error()
		} else {
			rj.Text = m.Text()
			conversationJSON(&rj, m)
		}
		if md := m.Media; md != nil {
			mj := &mediaJSON{Kind: md.Kind, MimeType: md.MimeType, FileName: md.FileName, Caption: md.Caption, Size: md.FileLength}
			if md.Err != nil {
				mj.Error = md.Err.Error()
			} else {
				sum := sha256.Sum256(md.Data)
				mj.SHA256 = hex.EncodeToString(sum[:])
			}
			rj.Media = mj
		}
		out = append(out, rj)
	}
	writeJSON(w, http.StatusOK, out)
}

// addressings are the control API's names of the ways a phone names
// itself in what it sends.
var addressings = map[string]Addressing{"phone": AddressPhone, "lid_with_phone": AddressLIDWithPhone, "lid_hidden": AddressLIDHidden}

// apiAddressing sets how the user's phone names itself: "lid_hidden" is a
// sender who hides their number (the account sees only the LID).
func (s *Simulator) apiAddressing(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		Addressing string `json:"addressing"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	a, ok := addressings[req.Addressing]
	if !ok {
		writeError(w, badRequest("addressing must be phone, lid_with_phone or lid_hidden"))
		return
	}
	u.SetAddressing(a)
	writeJSON(w, http.StatusOK, map[string]string{"addressing": req.Addressing, "lid": u.LID().String()})
}

// apiTicks lists the receipts the linked clients sent for the user's
// messages: the ticks the user's phone shows (delivered, read).
func (s *Simulator) apiTicks(w http.ResponseWriter, _ *http.Request, u *User) {
	type tickJSON struct {
		ID   string `json:"id"`
		From string `json:"from"`
		Type string `json:"type"`
	}
	out := []tickJSON{}
	for _, t := range u.Ticks() {
		typ := string(t.Type)
		if t.Type == types.ReceiptTypeDelivered {
			typ = "delivered"
		}
		out = append(out, tickJSON{ID: t.ID, From: t.From.String(), Type: typ})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Simulator) apiReceipt(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	var typ types.ReceiptType
	switch req.Type {
	case "delivered", "":
		typ = types.ReceiptTypeDelivered
	case "read":
		typ = types.ReceiptTypeRead
	default:
		writeError(w, badRequest("type must be delivered or read"))
		return
	}
	if err := u.SendReceipt(req.ID, typ); err != nil {
		writeError(w, &apiError{http.StatusNotFound, "not_found", err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "sent"})
}

func (s *Simulator) apiReceiptMode(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		Mode string `json:"mode"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	mode, ok := parseReceiptMode(req.Mode)
	if !ok {
		writeError(w, badRequest("mode must be none, delivered or read"))
		return
	}
	u.SetReceiptMode(mode)
	writeJSON(w, http.StatusOK, u.toJSON())
}

// apiFault injects a fault into the user's linked clients; see README.md.
func (s *Simulator) apiFault(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		Fault  string `json:"fault"`
		Count  int    `json:"count"`
		Code   int    `json:"code"`
		How    string `json:"how"`
		Expire string `json:"expire"`
		Delay  string `json:"delay"`
		Until  string `json:"until"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	affected := 0
	switch req.Fault {
	case "ghost":
		u.StopAnswering()
		affected = len(u.Connected())
	case "resume":
		u.ResumeAnswering()
	case "drop":
		affected = u.DropConnections()
	case "stream_replaced":
		affected = u.ReplaceStream()
	case "logout":
		affected = u.LogOutDevices()
	case "temp_ban":
		expire, err := time.ParseDuration(orDefault(req.Expire, "1h"))
		if err != nil || expire < 0 {
			writeError(w, badRequest("expire must be a duration like 1h"))
			return
		}
		affected = u.TempBan(orInt(req.Code, 101), expire)
	case "lift_ban":
		u.LiftBan()
	case "client_outdated":
		affected = u.SetClientOutdated(true)
	case "send_error":
		how := FailAck
		switch req.How {
		case "", "ack":
		case "device_list":
			how = FailDeviceList
		default:
			writeError(w, badRequest("how must be ack or device_list"))
			return
		}
		u.FailSends(orInt(req.Count, 1), how, req.Code)
		affected = orInt(req.Count, 1)
	case "slow":
		d, err := time.ParseDuration(req.Delay)
		if err != nil || d < 0 {
			writeError(w, badRequest("delay must be a duration like 500ms"))
			return
		}
		u.SetDelay(d)
	case "rate_overlimit":
		u.RateOverLimit(orInt(req.Count, 1))
		affected = orInt(req.Count, 1)
	case "reachout_lock":
		until, err := time.Parse(time.RFC3339Nano, req.Until)
		if err != nil {
			writeError(w, badRequest("until must be an RFC 3339 time"))
			return
		}
		affected = u.ReachoutLock(until)
	case "lift_reachout_lock":
		affected = u.LiftReachoutLock()
	case "clear":
		u.ClearFaults()
	default:
		writeError(w, badRequest("unknown fault %q", req.Fault))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"fault": req.Fault, "affected": affected})
}

// orInt returns v, or def when v is zero.
func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

type groupJSON struct {
	JID     string   `json:"jid"`
	Subject string   `json:"subject"`
	Owner   string   `json:"owner"`
	Members []string `json:"members"`
}

func (g *Group) toJSON() groupJSON {
	all := g.Members()
	members := make([]string, len(all))
	for i, m := range all {
		members[i] = m.Number()
	}
	return groupJSON{JID: g.jid.String(), Subject: g.Subject(), Owner: g.owner.Number(), Members: members}
}

func (s *Simulator) apiListGroups(w http.ResponseWriter, _ *http.Request) {
	groups := s.Groups()
	out := make([]groupJSON, len(groups))
	for i, g := range groups {
		out[i] = g.toJSON()
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Simulator) apiCreateGroup(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Subject string   `json:"subject"`
		Owner   string   `json:"owner"`
		Members []string `json:"members"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	owner, err := s.userForNumber(req.Owner)
	if err != nil || req.Subject == "" {
		writeError(w, badRequest("subject and an owner number are required"))
		return
	}
	members, err := s.usersForNumbers(req.Members)
	if err != nil {
		writeError(w, badRequest("%v", err))
		return
	}
	writeJSON(w, http.StatusCreated, s.CreateGroup(req.Subject, owner, members...).toJSON())
}

// apiVote votes on a poll the user received: {"poll_id", "options": [names]};
// no options takes the vote back.
func (s *Simulator) apiVote(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		PollID  string   `json:"poll_id"`
		Options []string `json:"options"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	answerOn(w, r, u, req.PollID, func(ctx context.Context, poll *Message) (types.MessageID, error) {
		return u.Vote(ctx, poll, req.Options...)
	})
}

// apiTap taps a reply button under a received message: {"message_id",
// "button_id"}.
func (s *Simulator) apiTap(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		MessageID string `json:"message_id"`
		ButtonID  string `json:"button_id"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	answerOn(w, r, u, req.MessageID, func(ctx context.Context, m *Message) (types.MessageID, error) {
		return u.Tap(ctx, m, req.ButtonID)
	})
}

// answerOn sends the phone's answer to the received message id (a vote, a
// tap) and writes its id; 404 when the phone has no such message, 400 when
// the message offers no such answer.
func answerOn(w http.ResponseWriter, r *http.Request, u *User, id string,
	answer func(context.Context, *Message) (types.MessageID, error),
) {
	m, ok := u.inbox.find(func(m *Message) bool { return m.ID == id })
	if !ok {
		writeError(w, &apiError{http.StatusNotFound, "not_found", "no received message " + id})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	sent, err := answer(ctx, m)
	if errors.Is(err, ErrNotAPoll) || errors.Is(err, ErrNoSuchButton) {
		err = badRequest("%v", err)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": sent})
}
