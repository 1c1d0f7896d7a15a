package wasim

import (
	"fmt"
	"net/http"
	"slices"

	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/store"

	"github.com/msgbridge/msgbridge/contract"
)

// WhatsApp refuses clients whose WhatsApp Web version it considers outdated:
// the login (or the registration of a new device) fails with
// <failure reason="405"/>, which whatsmeow reports as events.ClientOutdated.
// Clients learn the current version from WhatsApp Web's page, whose scripts
// carry "client_revision":N (whatsmeow's GetLatestVersion). The simulator
// does both: a minimum version (zero: every version is accepted) and the
// version its page names (the pinned whatsmeow's by default).

// clientVersions are the simulator's minimum and current client versions.
type clientVersions struct {
	minimum, current store.WAVersionContainer
	// announced are the versions of every handshake, in order; pageReads
	// counts the reads of WhatsApp Web's page (tests watch both).
	announced []store.WAVersionContainer
	pageReads int
}

// SetClientVersions sets the oldest version logins may announce and the
// version WhatsApp Web's page names; a zero minimum accepts every version.
// Connected clients older than the minimum are disconnected with 405, as a
// login would be refused. It returns how many were.
func (s *Simulator) SetClientVersions(minimum, current store.WAVersionContainer) int {
	s.mu.Lock()
	s.versions.minimum, s.versions.current = minimum, current
	var old []*conn
	for c := range s.conns {
		if c.user != nil && s.versions.refusesLocked(c.payload) {
			old = append(old, c)
		}
	}
	s.mu.Unlock()
	for _, c := range old {
		c.sendAndClose(failureNode(405, nil))
	}
	return len(old)
}

// ClientVersions are the minimum and current versions (SetClientVersions).
func (s *Simulator) ClientVersions() (minimum, current store.WAVersionContainer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versions.minimum, s.versions.current
}

// AnnouncedVersions are the versions clients announced, one per handshake.
func (s *Simulator) AnnouncedVersions() []store.WAVersionContainer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.versions.announced)
}

// WebPageReads counts the reads of WhatsApp Web's page.
func (s *Simulator) WebPageReads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versions.pageReads
}

// announcedVersion is the version a client payload announces.
func announcedVersion(p *waWa6.ClientPayload) store.WAVersionContainer {
	av := p.GetUserAgent().GetAppVersion()
	return store.WAVersionContainer{av.GetPrimary(), av.GetSecondary(), av.GetTertiary()}
}

// refusesLocked reports whether a client announcing p's version is too old.
func (v *clientVersions) refusesLocked(p *waWa6.ClientPayload) bool {
	return !v.minimum.IsZero() && announcedVersion(p).LessThan(v.minimum)
}

// handshakeLocked records a handshake's version and reports whether it is
// refused as outdated.
func (v *clientVersions) handshakeLocked(p *waWa6.ClientPayload) bool {
	v.announced = append(v.announced, announcedVersion(p))
	return v.refusesLocked(p)
}

// serveWebPage is WhatsApp Web's page as far as a client reads it: the
// current version in the form GetLatestVersion looks for.
func (s *Simulator) serveWebPage(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.versions.pageReads++
	current := s.versions.current
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>WhatsApp Web</title></head><body>`+
		`<script>self.__swData={"dynamic_data":{"SiteData":{"client_revision":%d,"server_revision":%d}}}</script></body></html>`,
		current[2], current[2])
}

type clientVersionJSON struct {
	Minimum string `json:"minimum"`
	Current string `json:"current"`
}

func versionText(v store.WAVersionContainer) string {
	if v.IsZero() {
		return ""
	}
	return v.String()
}

// apiClientVersion answers GET /v1/client-version.
func (s *Simulator) apiClientVersion(w http.ResponseWriter, _ *http.Request) {
	minimum, current := s.ClientVersions()
	writeJSON(w, http.StatusOK, clientVersionJSON{Minimum: versionText(minimum), Current: versionText(current)})
}

// apiSetClientVersion answers PUT /v1/client-version {"minimum","current"}:
// versions 2.3000.N; an empty minimum accepts every version, an empty
// current keeps the current one.
func (s *Simulator) apiSetClientVersion(w http.ResponseWriter, r *http.Request) {
	var req clientVersionJSON
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	_, current := s.ClientVersions()
	var minimum store.WAVersionContainer
	for _, field := range []struct {
		text string
		into *store.WAVersionContainer
	}{{req.Minimum, &minimum}, {req.Current, &current}} {
		if field.text == "" {
			continue
		}
		parts, err := contract.ParseWAVersion(field.text)
		if err != nil {
			writeError(w, badRequest("%s", err.Error()))
			return
		}
		*field.into = parts
	}
	disconnected := s.SetClientVersions(minimum, current)
	writeJSON(w, http.StatusOK, map[string]any{"minimum": versionText(minimum), "current": versionText(current), "disconnected": disconnected})
}
