package controllers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// fakeKeys plays the bridge's keys API: it stores what is put (the secret
// too, which it never lists) as the resource's, beside keys made by hand.
type fakeKeys struct {
	mu   sync.Mutex
	held map[string]contract.APIKey
	hand map[string]bool
}

func (f *fakeKeys) serve(mux *http.ServeMux, token string) {
	guard := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(bridgeclient.AdminTokenHeader) != token {
				http.Error(w, `{"error":{"code":"unauthorized","message":"wrong credential"}}`, http.StatusUnauthorized)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET "+contract.AdminKeysPath, guard(f.list))
	mux.HandleFunc("PUT "+contract.AdminKeysPath+"/{name}", guard(f.put))
	mux.HandleFunc("DELETE "+contract.AdminKeysPath+"/{name}", guard(f.revoke))
}

func (f *fakeKeys) list(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := contract.APIKeyList{Keys: []contract.APIKeyView{}}
	for _, name := range slices.Sorted(maps.Keys(f.held)) {
		source := "resource"
		if f.hand[name] {
			source = "api"
		}
		out.Keys = append(out.Keys, contract.APIKeyView{Name: name, Source: source})
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeKeys) put(w http.ResponseWriter, r *http.Request) {
	var k contract.APIKey
	if err := json.NewDecoder(r.Body).Decode(&k); err != nil || k.Name != r.PathValue("name") || len(k.Key) < 16 {
		http.Error(w, `{"error":{"code":"invalid_json","message":"bad body"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held == nil {
		f.held = map[string]contract.APIKey{}
	}
	f.held[k.Name] = k
	_ = json.NewEncoder(w).Encode(contract.APIKeyView{Name: k.Name, Source: "resource"})
}

func (f *fakeKeys) revoke(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, r.PathValue("name"))
	_, _ = w.Write([]byte(`{"name":"` + r.PathValue("name") + `","revoked":true}`))
}

func (f *fakeKeys) snapshot() map[string]contract.APIKey {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.held)
}

// spec.apiKeys reach the bridge with the secrets of their Secrets; a
// rotated secret is put again; a key the spec drops is revoked, and one a
// person made by hand is kept.
func TestAPIKeysPushedIntoBridge(t *testing.T) {
	ns, mb, bridge := connectedBridge(t)
	bridge.keys.mu.Lock()
	bridge.keys.held = map[string]contract.APIKey{"by-hand": {Name: "by-hand", Scopes: []string{"read"}}}
	bridge.keys.hand = map[string]bool{"by-hand": true}
	bridge.keys.mu.Unlock()
	createSecret(t, ns, "assistant-key", map[string]string{"key": "assistant-secret-0123456789"})
	expires := metav1.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.APIKeys = []msgbridgev1alpha1.APIKeySpec{{
			Name: "assistant", Scopes: []msgbridgev1alpha1.APIKeyScope{"read", "send", "mcp"}, Chats: []string{"4915112345678"},
			Budget: 20, ExpiresAt: &expires, Approval: true,
			SecretRef: msgbridgev1alpha1.SecretKeyReference{Name: "assistant-key", Key: "key"},
		}}
	})
	eventually(t, 20*time.Second, func() (bool, string) {
		k, ok := bridge.keys.snapshot()["assistant"]
		return ok && k.Key == "assistant-secret-0123456789" && k.Approval && k.Budget == 20 &&
				strings.Join(k.Scopes, ",") == "read,send,mcp" && k.ExpiresAt != nil && *k.ExpiresAt == "2099-01-01T00:00:00Z",
			fmt.Sprintf("the bridge holds %+v", bridge.keys.snapshot())
	})

	patchSecretData(t, ns, "assistant-key", "key", "assistant-rotated-0123456789")
	eventually(t, 20*time.Second, func() (bool, string) {
		k := bridge.keys.snapshot()["assistant"]
		return k.Key == "assistant-rotated-0123456789", "the rotated secret is not put"
	})

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.APIKeys = nil })
	eventually(t, 20*time.Second, func() (bool, string) {
		names := slices.Sorted(maps.Keys(bridge.keys.snapshot()))
		return slices.Equal(names, []string{"by-hand"}), fmt.Sprintf("the bridge holds %v, want by-hand alone", names)
	})
}
