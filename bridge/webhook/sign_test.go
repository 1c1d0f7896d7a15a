package webhook

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The vector of the Standard Webhooks reference libraries.
const (
	specKey = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID  = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS  = 1614265330
)

func TestSign(t *testing.T) {
	key, _ := base64.StdEncoding.DecodeString(specKey)
	for _, c := range []struct {
		name string
		id   string
		ts   int64
		body string
		want string
	}{
		{"spec vector", specID, specTS, `{"test": 2432232314}`, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
		{"another body", specID, specTS, `{"test": 1}`, ""},
		{"another id", "msg_other", specTS, `{"test": 2432232314}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := sign(key, c.id, c.ts, []byte(c.body))
			if c.want != "" && got != c.want {
				t.Fatalf("sign = %s, want %s", got, c.want)
			}
			if c.want == "" && got == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
				t.Fatal("a different input gave the vector's signature")
			}
		})
	}
}

// setHeaders' output verifies with the official library; without a key
// there is no signature header.
func TestHeadersVerifyWithStandardWebhooksLibrary(t *testing.T) {
	key, _ := base64.StdEncoding.DecodeString(specKey)
	body := []byte(`{"event":"session.status","state":"connected"}`)
	h := http.Header{}
	setHeaders(h, key, "msg_1", time.Now(), body)
	wh, err := standardwebhooks.NewWebhook("whsec_" + specKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(body, h); err != nil {
		t.Fatalf("verify: %v (headers %v)", err, h)
	}
	if err := wh.Verify(append(body, ' '), h); err == nil {
		t.Fatal("a changed body verified")
	}
	if h.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", h.Get("Content-Type"))
	}
	unsigned := http.Header{}
	setHeaders(unsigned, nil, "msg_1", time.Now(), body)
	if _, ok := unsigned[http.CanonicalHeaderKey(headerSignature)]; ok || unsigned.Get(headerID) != "msg_1" {
		t.Errorf("unsigned headers %v", unsigned)
	}
}
