package specs

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

func TestSubscriptionRendering(t *testing.T) {
	s := msgbridgev1alpha1.SubscriptionSpec{Name: "crm", Target: "https://crm.example/h", Headers: map[string]string{"X-Team": "a"}}
	got := Subscription(s, SubscriptionSecrets{Signing: []byte("whsec_a2V5")})
	if got.ID != "k8s-crm" || got.Format != "standard" || !got.Enabled || got.Events == nil || got.Secret != "whsec_a2V5" || got.Headers["X-Team"] != "a" {
		t.Errorf("rendered %+v", got)
	}
	s.Enabled, s.Format, s.Events = ptr.To(false), msgbridgev1alpha1.SubscriptionFormatCloud, []string{"message.upsert"}
	if got := Subscription(s, SubscriptionSecrets{}); got.Credentials != nil || got.Enabled || got.Format != "cloud" || got.Secret != "" || got.Events[0] != "message.upsert" {
		t.Errorf("rendered %+v", got)
	}
}

// The digest changes with every field the bridge holds, the secret
// included, and only with them.
func TestSubscriptionDigest(t *testing.T) {
	spec := msgbridgev1alpha1.SubscriptionSpec{Name: "crm", Target: "https://crm.example/h"}
	base := Subscription(spec, SubscriptionSecrets{Signing: []byte("one")})
	if SubscriptionDigest(base) != SubscriptionDigest(Subscription(spec, SubscriptionSecrets{Signing: []byte("one")})) {
		t.Error("the same subscription has two digests")
	}
	for name, change := range map[string]func(*contract.Subscription){
		"secret":  func(s *contract.Subscription) { s.Secret = "two" },
		"token":   func(s *contract.Subscription) { s.Credentials = &contract.SubscriptionCredentials{Token: "t"} },
		"target":  func(s *contract.Subscription) { s.Target = "https://bot.example/h" },
		"events":  func(s *contract.Subscription) { s.Events = []string{"session.status"} },
		"format":  func(s *contract.Subscription) { s.Format = "cloud" },
		"headers": func(s *contract.Subscription) { s.Headers = map[string]string{"A": "b"} },
		"enabled": func(s *contract.Subscription) { s.Enabled = false },
	} {
		changed := base
		change(&changed)
		if SubscriptionDigest(changed) == SubscriptionDigest(base) {
			t.Errorf("a change of %s keeps the digest", name)
		}
	}
}

// Only k8s- subscriptions the spec no longer names are stale: never a
// person's, never a current one.
func TestStaleSubscriptions(t *testing.T) {
	mb := bridge(func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{{Name: "crm"}}
	})
	held := []contract.SubscriptionView{}
	for _, id := range []string{"default", "manual", "k8s-crm", "k8s-old", "k8s"} {
		held = append(held, contract.SubscriptionView{Subscription: contract.Subscription{ID: id}})
	}
	if got := strings.Join(StaleSubscriptions(mb, held), " "); got != "k8s-old" {
		t.Errorf("stale: %q, want k8s-old", got)
	}
}

// A NATS target's credentials come from its Secret's token, or user and
// password; any other mix is invalid with a message that names keys,
// never values.
func TestNATSCredentials(t *testing.T) {
	for _, c := range []struct {
		name    string
		data    map[string]string
		want    *contract.SubscriptionCredentials
		invalid string
	}{
		{"token", map[string]string{"token": "s3cret-t"}, &contract.SubscriptionCredentials{Token: "s3cret-t"}, ""},
		{"user and password", map[string]string{"user": "bridge", "password": "s3cret-p", "other": "x"},
			&contract.SubscriptionCredentials{User: "bridge", Password: "s3cret-p"}, ""},
		{"both kinds", map[string]string{"token": "s3cret-t", "user": "bridge", "password": "s3cret-p"}, nil, "has both token and user/password"},
		{"user alone", map[string]string{"user": "bridge"}, nil, "only one of user and password"},
		{"password alone", map[string]string{"password": "s3cret-p"}, nil, "only one of user and password"},
		{"empty token", map[string]string{"token": ""}, nil, "neither the key token nor the keys user and password"},
		{"none", map[string]string{"secret": "s3cret-x"}, nil, "neither the key token nor the keys user and password"},
	} {
		data := map[string][]byte{}
		for k, v := range c.data {
			data[k] = []byte(v)
		}
		got, invalid := NATSCredentials("nats-creds", data)
		if !reflect.DeepEqual(got, c.want) || !strings.Contains(invalid, c.invalid) || (c.invalid == "") != (invalid == "") {
			t.Errorf("%s: %+v %q, want %+v %q", c.name, got, invalid, c.want, c.invalid)
		}
		if strings.Contains(invalid, "s3cret") || (invalid != "" && !strings.Contains(invalid, "Secret nats-creds")) {
			t.Errorf("%s: the message %q shows a value or does not name the Secret", c.name, invalid)
		}
	}
}

// A cloud receiver's verify token comes from its Secret's token alone; a
// nats:// target's credentials are read as NATS credentials, an amqp(s)://
// target's as a user and password, both.
func TestSubscriptionCredentials(t *testing.T) {
	cloud := msgbridgev1alpha1.SubscriptionSpec{Name: "chatwoot", Target: "https://chatwoot.example/webhooks/whatsapp/+4915100000001",
		Format: msgbridgev1alpha1.SubscriptionFormatCloud}
	nats := msgbridgev1alpha1.SubscriptionSpec{Name: "bus", Target: "nats://n.example:4222/wa"}
	rabbit := msgbridgev1alpha1.SubscriptionSpec{Name: "rabbit", Target: "amqps://r.example/prod?exchange=events"}
	for _, c := range []struct {
		name    string
		spec    msgbridgev1alpha1.SubscriptionSpec
		data    map[string]string
		want    *contract.SubscriptionCredentials
		invalid string
	}{
		{"verify token", cloud, map[string]string{"token": "s3cret-v"}, &contract.SubscriptionCredentials{Token: "s3cret-v"}, ""},
		{"verify token with a user", cloud, map[string]string{"token": "s3cret-v", "user": "bridge"}, nil, "takes only the verify token"},
		{"no token", cloud, map[string]string{"secret": "s3cret-x"}, nil, "has no key token"},
		{"nats user and password", nats, map[string]string{"user": "bridge", "password": "s3cret-p"},
			&contract.SubscriptionCredentials{User: "bridge", Password: "s3cret-p"}, ""},
		{"amqp user and password", rabbit, map[string]string{"user": "bridge", "password": "s3cret-p"},
			&contract.SubscriptionCredentials{User: "bridge", Password: "s3cret-p"}, ""},
		{"amqp token", rabbit, map[string]string{"token": "s3cret-t", "user": "bridge", "password": "s3cret-p"}, nil, "takes user and password"},
		{"amqp user alone", rabbit, map[string]string{"user": "bridge"}, nil, "lacks user or password"},
	} {
		data := map[string][]byte{}
		for k, v := range c.data {
			data[k] = []byte(v)
		}
		got, invalid := SubscriptionCredentials(c.spec, "creds", data)
		if !reflect.DeepEqual(got, c.want) || !strings.Contains(invalid, c.invalid) || (c.invalid == "") != (invalid == "") {
			t.Errorf("%s: %+v %q, want %+v %q", c.name, got, invalid, c.want, c.invalid)
		}
		if strings.Contains(invalid, "s3cret") || (invalid != "" && !strings.Contains(invalid, "Secret creds")) {
			t.Errorf("%s: the message %q shows a value or does not name the Secret", c.name, invalid)
		}
	}
}
