package specs

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

func TestSubscriptionRendering(t *testing.T) {
	s := msgbridgev1alpha1.SubscriptionSpec{Name: "crm", Target: "https://crm.example/h", Headers: map[string]string{"X-Team": "a"}}
	got := Subscription(s, []byte("whsec_a2V5"))
	if got.ID != "k8s-crm" || got.Format != "standard" || !got.Enabled || got.Events == nil || got.Secret != "whsec_a2V5" || got.Headers["X-Team"] != "a" {
		t.Errorf("rendered %+v", got)
	}
	s.Enabled, s.Format, s.Events = ptr.To(false), msgbridgev1alpha1.SubscriptionFormatCloud, []string{"message.upsert"}
	if got := Subscription(s, nil); got.Enabled || got.Format != "cloud" || got.Secret != "" || got.Events[0] != "message.upsert" {
		t.Errorf("rendered %+v", got)
	}
}

// The digest changes with every field the bridge holds, the secret
// included, and only with them.
func TestSubscriptionDigest(t *testing.T) {
	base := Subscription(msgbridgev1alpha1.SubscriptionSpec{Name: "crm", Target: "https://crm.example/h"}, []byte("one"))
	if SubscriptionDigest(base) != SubscriptionDigest(Subscription(msgbridgev1alpha1.SubscriptionSpec{Name: "crm", Target: "https://crm.example/h"}, []byte("one"))) {
		t.Error("the same subscription has two digests")
	}
	for name, change := range map[string]func(*contract.Subscription){
		"secret":  func(s *contract.Subscription) { s.Secret = "two" },
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
