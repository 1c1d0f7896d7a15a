package httpapi

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// fakeOwnAccount is the contact book with the account's own profile: it
// keeps the push name it was given, or refuses with err.
type fakeOwnAccount struct {
	fakeContacts
	mu       sync.Mutex
	pushName string
	sets     int
	err      error
}

func (f *fakeOwnAccount) OwnProfile(context.Context) (bridge.OwnProfile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bridge.OwnProfile{PushName: f.pushName, ContactProfile: bridge.ContactProfile{Contact: bridge.PhoneRecipient("4915100000001")}}, nil
}

func (f *fakeOwnAccount) SetPushName(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets++
	if f.err != nil {
		return f.err
	}
	f.pushName = name
	return nil
}

func (f *fakeOwnAccount) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sets
}

func (*fakeOwnAccount) SetAbout(context.Context, string) error   { return nil }
func (*fakeOwnAccount) SetPicture(context.Context, []byte) error { return nil }
func (*fakeOwnAccount) PrivacySettings(context.Context) (bridge.PrivacySettings, error) {
	return bridge.PrivacySettings{}, nil
}

// PUT /api/profile's push name: a name WhatsApp would not show is refused
// with invalid_push_name before anything reaches WhatsApp; 25 characters
// of any script are taken and GET /api/profile shows them; without the
// phone's app state keys the change answers 503 app_state_unavailable.
func TestPutProfilePushName(t *testing.T) {
	account := &fakeOwnAccount{}
	srv := newTestServer(t, testDeps{Messages: &fakeMessages{}, Contacts: account})
	key, url := "X-Api-Key: "+testAPIKey, srv.URL+"/api/profile"
	for _, bad := range []string{`""`, `"   "`, `"Twenty-six characters long"`, `"two\nlines"`, `"tab\there"`, `"del\u007f"`, `null`, `42`} {
		status, body := call(t, "PUT", url, strings.NewReader(`{"push_name":`+bad+`}`), key, jsonType)
		if want := "invalid_push_name"; bad == "42" || bad == "null" {
			want = "invalid_json"
			if status != 400 || errorCode(t, body) != want {
				t.Errorf("push_name %s: %d %s, want %s", bad, status, body, want)
			}
		} else if status != 400 || errorCode(t, body) != want {
			t.Errorf("push_name %s: %d %s, want %s", bad, status, body, want)
		}
	}
	if account.calls() != 0 {
		t.Fatalf("a refused name reached WhatsApp %d times", account.calls())
	}

	name := "Ünïcödé Süpport ✓ 25 chrs" // 25 characters, more bytes
	status, body := call(t, "PUT", url, strings.NewReader(`{"push_name":"`+name+`"}`), key, jsonType)
	if status != 200 || body != `{"changed":["push name"]}`+"\n" {
		t.Fatalf("put: %d %s", status, body)
	}
	if status, body := call(t, "GET", url, nil, key); status != 200 || !strings.Contains(body, `"push_name":"`+name+`"`) {
		t.Errorf("get: %d %s", status, body)
	}

	account.err = bridge.ErrAppStateUnavailable
	if status, body := call(t, "PUT", url, strings.NewReader(`{"push_name":"Acme"}`), key, jsonType); status != 503 ||
		errorCode(t, body) != "app_state_unavailable" {
		t.Errorf("without the app state keys: %d %s", status, body)
	}
}
