package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/apikeys"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// KeyAdmin manages the scoped API keys (*apikeys.Keys).
type KeyAdmin interface {
	Create(ctx context.Context, r apikeys.Request) (apikeys.Key, bridge.Secret, error)
	Put(ctx context.Context, r apikeys.Request, secret bridge.Secret) (apikeys.Key, error)
	List(ctx context.Context) ([]apikeys.Key, error)
	Revoke(ctx context.Context, name string) error
}

// keyRequestJSON is the body of POST /api/admin/keys (name in the body)
// and PUT /api/admin/keys/{name} (the operator's push: the secret in key).
type keyRequestJSON struct {
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	Chats     []string `json:"chats"`
	Budget    int      `json:"budget"`
	ExpiresAt *string  `json:"expires_at"`
	Approval  bool     `json:"approval"`
	Key       string   `json:"key"`
}

// keyJSON is a key as listed; Key (the secret) only in the answer that
// created it.
type keyJSON struct {
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	Chats     []string `json:"chats"`
	Budget    int      `json:"budget"`
	ExpiresAt *string  `json:"expires_at"`
	Approval  bool     `json:"approval"`
	Source    string   `json:"source"`
	CreatedAt string   `json:"created_at"`
	Key       string   `json:"key,omitempty"`
}

func keyOf(k apikeys.Key) keyJSON {
	out := keyJSON{Name: k.Name, Scopes: make([]string, len(k.Scopes)), Chats: make([]string, len(k.Chats)),
		Budget: k.Budget, ExpiresAt: optionalStamp(k.ExpiresAt), Approval: k.Approval, Source: k.Source,
		CreatedAt: bridge.FormatTime(k.CreatedAt)}
	for i, sc := range k.Scopes {
		out.Scopes[i] = string(sc)
	}
	for i, c := range k.Chats {
		out.Chats[i] = c.String()
	}
	return out
}

func (s *server) keyRoutes(r *mux.Router, prefix string, g httpkit.Guarded) {
	r.Handle(prefix+"/keys", g.Admin(s.listKeys)).Methods(httpkit.Get)
	r.Handle(prefix+"/keys", g.Audited(audit.ActionKeyCreate, s.createKey)).Methods(httpkit.Post)
	r.Handle(prefix+"/keys/{name}", g.Audited(audit.ActionKeyCreate, s.putKey)).Methods(http.MethodPut)
	r.Handle(prefix+"/keys/{name}", g.Audited(audit.ActionKeyRevoke, s.revokeKey)).Methods(httpkit.Del)
}

func (s *server) listKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.Keys.List(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Keys []keyJSON `json:"keys"`
	}{Keys: make([]keyJSON, len(keys))}
	for i, k := range keys {
		out.Keys[i] = keyOf(k)
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

// createKey makes a key and answers its secret, once: the bridge keeps
// only its hash.
func (s *server) createKey(w http.ResponseWriter, r *http.Request) error {
	req, err := readKeyRequest(w, r)
	if err != nil {
		return err
	}
	if req.Key != "" {
		return bridge.Invalid(bridge.CodeInvalidKeySecret, "the bridge makes the key's secret; key is PUT's, for the operator")
	}
	key, secret, err := s.Keys.Create(r.Context(), req.request())
	if err != nil {
		return err
	}
	out := keyOf(key)
	out.Key = secret.Reveal()
	w.Header().Set("Cache-Control", "no-store")
	return httpkit.WriteJSON(w, http.StatusCreated, out)
}

// putKey stores the resource's key of the path's name with the secret the
// operator read from its Secret (source resource), replacing it.
func (s *server) putKey(w http.ResponseWriter, r *http.Request) error {
	req, err := readKeyRequest(w, r)
	if err != nil {
		return err
	}
	name := mux.Vars(r)["name"]
	if req.Name != "" && req.Name != name {
		return bridge.Invalid(bridge.CodeInvalidKeyName, "the body's name differs from the path's")
	}
	req.Name = name
	key, err := s.Keys.Put(r.Context(), req.request(), bridge.Secret(req.Key))
	if err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, keyOf(key))
}

func (s *server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	name := mux.Vars(r)["name"]
	if err := s.Keys.Revoke(r.Context(), name); err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{"name": name, "revoked": true})
}

func readKeyRequest(w http.ResponseWriter, r *http.Request) (keyRequestJSON, error) {
	var req keyRequestJSON
	if err := httpkit.DecodeJSON(w, r, &req); err != nil {
		return req, err
	}
	if req.ExpiresAt != nil {
		if _, err := time.Parse(time.RFC3339, *req.ExpiresAt); err != nil {
			return req, bridge.Invalid(bridge.CodeInvalidKeyExpiry, "expires_at must be an RFC 3339 time, e.g. 2026-12-31T23:59:59Z")
		}
	}
	return req, nil
}

func (k keyRequestJSON) request() apikeys.Request {
	r := apikeys.Request{Name: k.Name, Scopes: k.Scopes, Chats: k.Chats, Budget: k.Budget, Approval: k.Approval}
	if k.ExpiresAt != nil {
		t, _ := time.Parse(time.RFC3339, *k.ExpiresAt) // checked by readKeyRequest
		r.ExpiresAt = &t
	}
	return r
}
