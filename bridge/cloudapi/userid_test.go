package cloudapi

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// userIDForm is Meta's business-scoped user id: a region, a dot, letters
// and digits.
var userIDForm = regexp.MustCompile(`^[A-Z]{2}\.[a-z2-7]{31}$`)

// A contact's user id is the same on every call and under every start of
// one key, differs by contact and by key, resolves back to the contact, and
// an id changed by one character, or issued under another key, resolves to
// nothing.
func TestUserIDs(t *testing.T) {
	ids, err := NewUserIDs([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := NewUserIDs([]byte("0123456789abcdef0123456789abcdef"))
	other, _ := NewUserIDs([]byte("another master key of 32 bytes.."))
	alice, bob := bridge.PhoneRecipient("4915100000002"), bridge.PhoneRecipient("5511900000003")
	hidden := bridge.Recipient{Kind: bridge.RecipientLID, ID: "123456789012345"}
	seen := map[string]bool{}
	for _, c := range []struct {
		r      bridge.Recipient
		region string
	}{{alice, "DE"}, {bob, "BR"}, {hidden, "ZZ"}, {bridge.PhoneRecipient("8860000000001"), "ZZ"}} {
		id := ids.For(c.r)
		if !userIDForm.MatchString(id) || !strings.HasPrefix(id, c.region+".") || id != again.For(c.r) || seen[id] {
			t.Errorf("%v: %q (region %s)", c.r, id, c.region)
		}
		seen[id] = true
		if got, ok := ids.Resolve(id); !ok || got != c.r {
			t.Errorf("resolve %q: %v %v, want %v", id, got, ok, c.r)
		}
		if _, ok := other.Resolve(id); ok || other.For(c.r) == id {
			t.Errorf("%q resolves under another key", id)
		}
		body := []byte(id)
		body[len(body)-3] ^= 1
		if _, ok := ids.Resolve(string(body)); ok {
			t.Errorf("a changed id %q resolves", body)
		}
	}
	group := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	if got, ok := ids.Resolve(ids.For(group)); !ok || got != group {
		t.Errorf("a group's user id resolves to %v %v", got, ok)
	}
	if ids.For(bridge.Recipient{Kind: bridge.RecipientGroup, ID: "4915100000002-1600000000"}) != "" {
		t.Error("an old group's id got a user id")
	}
	// The region is decoration: an id under another region resolves alike.
	if got, ok := ids.Resolve("US." + strings.SplitN(ids.For(alice), ".", 2)[1]); !ok || got != alice {
		t.Errorf("another region: %v %v", got, ok)
	}
}

// FuzzResolveUserID: a send's recipient is untrusted input; Resolve never
// panics, and what it resolves is issued back as the same body.
func FuzzResolveUserID(f *testing.F) {
	ids := defaultUserIDs
	f.Add(ids.For(bridge.PhoneRecipient("4915100000002")))
	f.Add(ids.For(bridge.Recipient{Kind: bridge.RecipientLID, ID: "1"}))
	f.Add("US.")
	f.Add("..")
	f.Add("ZZ.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Fuzz(func(t *testing.T, id string) {
		r, ok := ids.Resolve(id)
		if !ok {
			return
		}
		_, body, _ := strings.Cut(ids.For(r), ".")
		_, given, _ := strings.Cut(id, ".")
		if !strings.EqualFold(body, given) {
			t.Errorf("%q resolved to %v, whose id is %q", id, r, ids.For(r))
		}
	})
}

// FuzzFormAsJSON: a form-encoded send is untrusted input; its JSON is
// always valid JSON of an object.
func FuzzFormAsJSON(f *testing.F) {
	f.Add("messaging_product=whatsapp&to=1&type=text&text=%7B%22body%22%3A%22hi%22%7D")
	f.Add("a=%5B1%2C2&b=%7B&=&&c")
	f.Fuzz(func(t *testing.T, form string) {
		out, err := formAsJSON([]byte(form))
		if err != nil {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Errorf("%q became %s: %v", form, out, err)
		}
	})
}

// knownByLID pairs one number with one LID, the LID known first.
type knownByLID struct{ phone, lid bridge.Recipient }

func (k knownByLID) Canonical(r bridge.Recipient) bridge.Recipient {
	if r == k.phone {
		return k.lid
	}
	return r
}

// A contact the account knew by LID first keeps the LID's user id when an
// event names it by number.
func TestUserIDFollowsTheSideKnownFirst(t *testing.T) {
	phone, lid := bridge.PhoneRecipient("4915100000002"), bridge.Recipient{Kind: bridge.RecipientLID, ID: "99887766"}
	ids := newUserIDs([]byte("test key")).Knowing(knownByLID{phone, lid})
	if ids.For(phone) != ids.For(lid) {
		t.Errorf("by number %s, by LID %s", ids.For(phone), ids.For(lid))
	}
	other := bridge.PhoneRecipient("4915100000003")
	if r, ok := ids.Resolve(ids.For(other)); !ok || r != other {
		t.Errorf("an unpaired number resolves to %v %v", r, ok)
	}
}
