package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// fakeSubscriptions plays the bridge's subscriptions API: it stores what is
// put (secrets included, which it never lists), lists it with a health the
// test sets, and refuses a target the test names, as the bridge refuses an
// invalid one.
type fakeSubscriptions struct {
	mu      sync.Mutex
	held    map[string]contract.Subscription
	health  map[string]contract.SubscriptionHealth
	refuse  string
	puts    atomic.Int64
	deletes atomic.Int64
}

func (f *fakeSubscriptions) serve(mux *http.ServeMux, token string) {
	guard := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(bridgeclient.AdminTokenHeader) != token {
				http.Error(w, `{"error":{"code":"unauthorized","message":"wrong credential"}}`, http.StatusUnauthorized)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET "+contract.AdminSubscriptionsPath, guard(f.list))
	mux.HandleFunc("PUT "+contract.AdminSubscriptionsPath+"/{id}", guard(f.put))
	mux.HandleFunc("DELETE "+contract.AdminSubscriptionsPath+"/{id}", guard(f.delete))
}

func (f *fakeSubscriptions) list(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []contract.SubscriptionView{}
	for _, id := range slices.Sorted(maps.Keys(f.held)) {
		s := f.held[id]
		s.Secret, s.Credentials = "", nil
		h, ok := f.health[id]
		if !ok {
			h = contract.SubscriptionHealth{State: contract.SubscriptionHealthy}
			if !s.Enabled {
				h.State = contract.SubscriptionDisabled
			}
		}
		out = append(out, contract.SubscriptionView{Subscription: s, Health: h})
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeSubscriptions) put(w http.ResponseWriter, r *http.Request) {
	var s contract.Subscription
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil || s.ID != r.PathValue("id") {
		http.Error(w, `{"error":{"code":"invalid_json","message":"bad body"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != "" && s.Target == f.refuse {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"code":"invalid_target","message":"target host does not resolve"}}`))
		return
	}
	f.puts.Add(1)
	if f.held == nil {
		f.held = map[string]contract.Subscription{}
	}
	f.held[s.ID] = s
	_ = json.NewEncoder(w).Encode(s)
}

func (f *fakeSubscriptions) delete(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes.Add(1)
	delete(f.held, r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeSubscriptions) get(id string) (contract.Subscription, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.held[id]
	return s, ok
}

func (f *fakeSubscriptions) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.held))
}

func (f *fakeSubscriptions) setHealth(id string, h contract.SubscriptionHealth) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.health == nil {
		f.health = map[string]contract.SubscriptionHealth{}
	}
	f.health[id] = h
}

// waitSubscriptions waits until the SubscriptionsHealthy condition has the
// status and reason and every status entry's state is in want (by name).
func waitSubscriptions(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, status metav1.ConditionStatus, reason string, want map[string]msgbridgev1alpha1.SubscriptionState) *msgbridgev1alpha1.MessagingBridge {
	t.Helper()
	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionSubscriptionsHealthy, status, reason)
	eventually(t, 20*time.Second, func() (bool, string) {
		getObject(t, client.ObjectKeyFromObject(mb), got)
		states := map[string]msgbridgev1alpha1.SubscriptionState{}
		for _, s := range got.Status.Subscriptions {
			states[s.Name] = s.State
		}
		return maps.Equal(states, want), fmt.Sprintf("subscription states %v, want %v", states, want)
	})
	return got
}

func subscriptionsCondition(mb *msgbridgev1alpha1.MessagingBridge) string {
	for _, c := range mb.Status.Conditions {
		if c.Type == msgbridgev1alpha1.ConditionSubscriptionsHealthy {
			return c.Message
		}
	}
	return ""
}

func createSecret(t *testing.T, ns, name string, data map[string]string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	create(t, s)
	return s
}

// spec.subscriptions reach the bridge through its admin API: each as
// k8s-<name> with its secret, events, format, headers and enabled flag; a
// subscription whose Secret key is missing is invalid and named in the
// condition until the key appears; k8s- subscriptions the spec does not name
// are deleted, and one a person made through the admin API is kept.
func TestSubscriptionsRenderedIntoBridge(t *testing.T) {
	ns, mb, bridge := connectedBridge(t)
	bridge.subs.mu.Lock()
	bridge.subs.held = map[string]contract.Subscription{
		"manual":  {ID: "manual", Target: "https://ops.example/hook", Enabled: true},
		"k8s-old": {ID: "k8s-old", Target: "https://old.example/hook", Enabled: true},
	}
	bridge.subs.mu.Unlock()
	createSecret(t, ns, "crm-hook", map[string]string{"secret": "whsec_Y3JtLXNpZ25pbmcta2V5"})
	createSecret(t, ns, "bot-hook", map[string]string{"other": "x"})
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{
			{Name: "crm", Target: "https://crm.example/hooks", Events: []string{"message.upsert", "message.status"},
				SecretRef: &msgbridgev1alpha1.SecretKeyReference{Name: "crm-hook", Key: "secret"}, Headers: map[string]string{"X-Team": "sales"}},
			{Name: "bus", Target: "nats://nats.example:4222/wa", Enabled: ptr.To(false)},
			{Name: "bot", Target: "https://bot.example/hooks", SecretRef: &msgbridgev1alpha1.SecretKeyReference{Name: "bot-hook", Key: "secret"}},
		}
	})

	got := waitSubscriptions(t, mb, metav1.ConditionFalse, conditions.ReasonSubscriptionInvalid, map[string]msgbridgev1alpha1.SubscriptionState{
		"crm": msgbridgev1alpha1.SubscriptionHealthy, "bus": msgbridgev1alpha1.SubscriptionDisabled, "bot": msgbridgev1alpha1.SubscriptionInvalid})
	if m := subscriptionsCondition(got); !strings.Contains(m, "subscription bot") || !strings.Contains(m, `no key "secret"`) {
		t.Errorf("condition message %q does not name the invalid subscription and its missing key", m)
	}
	waitEvent(t, ns, mb.Name, corev1.EventTypeWarning, conditions.ReasonSubscriptionInvalid)
	crm, _ := bridge.subs.get("k8s-crm")
	if crm.Secret != "whsec_Y3JtLXNpZ25pbmcta2V5" || crm.Format != "standard" || !crm.Enabled || crm.Headers["X-Team"] != "sales" ||
		strings.Join(crm.Events, ",") != "message.upsert,message.status" || crm.Target != "https://crm.example/hooks" {
		t.Errorf("k8s-crm in the bridge: %+v", crm)
	}
	if bus, _ := bridge.subs.get("k8s-bus"); bus.Enabled || bus.Target != "nats://nats.example:4222/wa" {
		t.Errorf("k8s-bus in the bridge: %+v", bus)
	}
	if ids := strings.Join(bridge.subs.ids(), " "); ids != "k8s-bus k8s-crm manual" {
		t.Errorf("the bridge holds %s, want k8s-bus k8s-crm manual (k8s-old deleted, manual kept, bot not rendered)", ids)
	}

	// The key appears: the Secret's event renders bot.
	patchSecretData(t, ns, "bot-hook", "secret", "whsec_Ym90LXNpZ25pbmcta2V5")
	waitSubscriptions(t, mb, metav1.ConditionTrue, conditions.ReasonSubscriptionsHealthy, map[string]msgbridgev1alpha1.SubscriptionState{
		"crm": msgbridgev1alpha1.SubscriptionHealthy, "bus": msgbridgev1alpha1.SubscriptionDisabled, "bot": msgbridgev1alpha1.SubscriptionHealthy})
	waitEvent(t, ns, mb.Name, corev1.EventTypeNormal, conditions.ReasonSubscriptionsHealthy)

	// The spec drops them all: the k8s- ones go, the person's stays, and
	// the condition with them.
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Subscriptions = nil })
	eventually(t, 20*time.Second, func() (bool, string) {
		getObject(t, client.ObjectKeyFromObject(mb), got)
		ids := strings.Join(bridge.subs.ids(), " ")
		return ids == "manual" && subscriptionsCondition(got) == "" && len(got.Status.Subscriptions) == 0,
			fmt.Sprintf("bridge holds %s; condition %q; status %v", ids, subscriptionsCondition(got), got.Status.Subscriptions)
	})
}

// A failing receiver is named with the bridge's last error; a rotated secret
// is put again; at steady state the operator puts nothing (it compares what
// it put last, since the bridge never echoes a secret).
func TestSubscriptionHealthAndSecretRotation(t *testing.T) {
	ns, mb, bridge := connectedBridge(t)
	createSecret(t, ns, "crm-hook", map[string]string{"secret": "whsec_b25l"})
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{{Name: "crm", Target: "https://crm.example/hooks",
			SecretRef: &msgbridgev1alpha1.SecretKeyReference{Name: "crm-hook", Key: "secret"}}}
	})
	waitSubscriptions(t, mb, metav1.ConditionTrue, conditions.ReasonSubscriptionsHealthy, map[string]msgbridgev1alpha1.SubscriptionState{"crm": msgbridgev1alpha1.SubscriptionHealthy})

	puts, polls := bridge.subs.puts.Load(), bridge.polls.Load()
	eventually(t, 20*time.Second, func() (bool, string) {
		return bridge.polls.Load() >= polls+5, "waiting for 5 more polls"
	})
	if n := bridge.subs.puts.Load() - puts; n != 0 {
		t.Errorf("%d puts at steady state, want 0", n)
	}

	bridge.subs.setHealth("k8s-crm", contract.SubscriptionHealth{State: contract.SubscriptionFailing, DeadLetters: 3, LastError: "POST https://crm.example/hooks: HTTP 503"})
	got := waitSubscriptions(t, mb, metav1.ConditionFalse, conditions.ReasonSubscriptionFailing, map[string]msgbridgev1alpha1.SubscriptionState{"crm": msgbridgev1alpha1.SubscriptionFailing})
	if m := subscriptionsCondition(got); !strings.Contains(m, "subscription crm") || !strings.Contains(m, "HTTP 503") {
		t.Errorf("condition message %q does not name the failing subscription and its error", m)
	}
	if s := got.Status.Subscriptions[0]; s.DeadLetters != 3 || s.ID != "k8s-crm" || !strings.Contains(s.LastError, "HTTP 503") {
		t.Errorf("status of crm: %+v", s)
	}

	// The secret goes through the admin API: the pod does not restart.
	hash := waitStatefulSet(t, mb, anyStatefulSet).Spec.Template.Annotations[specs.SecretsHashAnnotation]
	patchSecretData(t, ns, "crm-hook", "secret", "whsec_dHdv")
	eventually(t, 20*time.Second, func() (bool, string) {
		s, _ := bridge.subs.get("k8s-crm")
		return s.Secret == "whsec_dHdv", "the bridge holds secret " + s.Secret
	})
	if now := waitStatefulSet(t, mb, anyStatefulSet).Spec.Template.Annotations[specs.SecretsHashAnnotation]; now != hash || hash == "" {
		t.Errorf("rotating a subscription's secret changed the pod's secrets hash from %q to %q: the pod restarts", hash, now)
	}
}

// A subscription the bridge refuses is invalid, with the bridge's own error;
// the others are rendered; a bridge without the subscriptions API says so.
func TestSubscriptionRefusedByBridge(t *testing.T) {
	_, mb, bridge := connectedBridge(t)
	bridge.subs.mu.Lock()
	bridge.subs.refuse = "https://nowhere.invalid/hooks"
	bridge.subs.mu.Unlock()
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{
			{Name: "good", Target: "https://crm.example/hooks"},
			{Name: "bad", Target: "https://nowhere.invalid/hooks"},
		}
	})
	got := waitSubscriptions(t, mb, metav1.ConditionFalse, conditions.ReasonSubscriptionInvalid, map[string]msgbridgev1alpha1.SubscriptionState{
		"good": msgbridgev1alpha1.SubscriptionHealthy, "bad": msgbridgev1alpha1.SubscriptionInvalid})
	if m := subscriptionsCondition(got); !strings.Contains(m, "subscription bad") || !strings.Contains(m, "invalid_target") {
		t.Errorf("condition message %q does not carry the bridge's refusal", m)
	}
}

// The API server refuses invalid subscriptions: a target of another scheme
// or without a host, two of one name, the cloud format on NATS, a bad
// header name.
func TestCRDRejectsInvalidSubscriptions(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	sub := func(name, target string) msgbridgev1alpha1.SubscriptionSpec {
		return msgbridgev1alpha1.SubscriptionSpec{Name: name, Target: target}
	}
	cases := []struct {
		name string
		subs []msgbridgev1alpha1.SubscriptionSpec
		want string
	}{
		{"ftp target", []msgbridgev1alpha1.SubscriptionSpec{sub("a", "ftp://x.example/")}, "subscription target must be http, https, nats, amqp or amqps"},
		{"target without host", []msgbridgev1alpha1.SubscriptionSpec{sub("a", "nats://")}, "absolute URL with a host"},
		{"amqp target without host", []msgbridgev1alpha1.SubscriptionSpec{sub("a", "amqp:///?exchange=x")}, "absolute URL with a host"},
		{"cloud on amqp", []msgbridgev1alpha1.SubscriptionSpec{{Name: "a", Target: "amqp://r.example/", Format: msgbridgev1alpha1.SubscriptionFormatCloud}}, "format cloud needs an http or https target"},
		{"two of one name", []msgbridgev1alpha1.SubscriptionSpec{sub("a", "https://x.example/"), sub("a", "https://y.example/")}, "Duplicate value"},
		{"name with capitals", []msgbridgev1alpha1.SubscriptionSpec{sub("CRM", "https://x.example/")}, "should match"},
		{"cloud on nats", []msgbridgev1alpha1.SubscriptionSpec{{Name: "a", Target: "nats://n.example:4222/wa", Format: msgbridgev1alpha1.SubscriptionFormatCloud}}, "format cloud needs an http or https target"},
		{"bad header name", []msgbridgev1alpha1.SubscriptionSpec{{Name: "a", Target: "https://x.example/", Headers: map[string]string{"X Team": "a"}}}, "header names must be"},
		{"bad event", []msgbridgev1alpha1.SubscriptionSpec{{Name: "a", Target: "https://x.example/", Events: []string{"Message Upsert"}}}, "should match"},
		{"NATS credentials on http", []msgbridgev1alpha1.SubscriptionSpec{{Name: "a", Target: "https://x.example/",
			CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "nats-creds"}}}, "credentialsSecretRef is for a nats:// or amqp(s):// target"},
		{"credentials Secret name", []msgbridgev1alpha1.SubscriptionSpec{{Name: "a", Target: "nats://n.example:4222/wa",
			CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "Nats_Creds"}}}, "DNS-1123 subdomain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mb := newBridge(ns, "bad")
			mb.Spec.Subscriptions = tc.subs
			err := k8sClient.Create(context.Background(), mb)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("valid and defaulted", func(t *testing.T) {
		mb := newBridge(ns, "good")
		mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{sub("crm", "https://crm.example/hooks"), sub("bus", "nats://n.example:4222/wa"),
			{Name: "all", Target: "http://a.example/", Events: []string{"*", "message.*"}},
			{Name: "jet", Target: "nats://n.example:4222/wa", CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "nats-creds"}},
			{Name: "rabbit", Target: "amqps://rabbitmq.example:5671/prod?exchange=events&prefix=wa",
				CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "rabbit-creds"}},
			sub("rabbit-plain", "amqp://rabbitmq.example/"),
			{Name: "chatwoot", Target: "https://c.example/webhooks/whatsapp/+4915100000001", Format: msgbridgev1alpha1.SubscriptionFormatCloud,
				CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "chatwoot-verify"}}}
		create(t, mb)
		var got msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(mb), &got)
		if s := got.Spec.Subscriptions[0]; s.Format != msgbridgev1alpha1.SubscriptionFormatStandard || s.Enabled == nil || !*s.Enabled {
			t.Errorf("defaults not applied: %+v", s)
		}
	})
}

// A nats:// subscription's credentials come from the Secret that
// credentialsSecretRef names: its token, or its user and password, put
// into the bridge's credentials (the signing secret stays secretRef's). A
// Secret with both kinds is invalid, named in the condition by its keys;
// fixing it, or rotating the credentials, puts them again. No credential
// ever shows in the status, the conditions or the events.
func TestSubscriptionNATSCredentials(t *testing.T) {
	ns, mb, bridge := connectedBridge(t)
	createSecret(t, ns, "nats-creds", map[string]string{"token": "s3cret-token"})
	createSecret(t, ns, "bus-sign", map[string]string{"secret": "whsec_YnVzLXNpZ25pbmc="})
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{{Name: "bus", Target: "nats://nats.example:4222/wa",
			SecretRef:            &msgbridgev1alpha1.SecretKeyReference{Name: "bus-sign", Key: "secret"},
			CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "nats-creds"}}}
	})
	healthy := map[string]msgbridgev1alpha1.SubscriptionState{"bus": msgbridgev1alpha1.SubscriptionHealthy}
	waitSubscriptions(t, mb, metav1.ConditionTrue, conditions.ReasonSubscriptionsHealthy, healthy)
	bus, _ := bridge.subs.get("k8s-bus")
	if bus.Credentials == nil || *bus.Credentials != (contract.SubscriptionCredentials{Token: "s3cret-token"}) || bus.Secret != "whsec_YnVzLXNpZ25pbmc=" {
		t.Errorf("k8s-bus in the bridge: credentials %+v, secret %q", bus.Credentials, bus.Secret)
	}

	patchSecretData(t, ns, "nats-creds", "user", "bridge")
	patchSecretData(t, ns, "nats-creds", "password", "s3cret-password")
	got := waitSubscriptions(t, mb, metav1.ConditionFalse, conditions.ReasonSubscriptionInvalid,
		map[string]msgbridgev1alpha1.SubscriptionState{"bus": msgbridgev1alpha1.SubscriptionInvalid})
	if m := subscriptionsCondition(got); !strings.Contains(m, "Secret nats-creds has both token and user/password") {
		t.Errorf("condition message %q does not name the Secret's clashing keys", m)
	}
	waitEvent(t, ns, mb.Name, corev1.EventTypeWarning, conditions.ReasonSubscriptionInvalid)

	removeSecretKey(t, ns, "nats-creds", "token")
	waitSubscriptions(t, mb, metav1.ConditionTrue, conditions.ReasonSubscriptionsHealthy, healthy)
	eventually(t, 20*time.Second, func() (bool, string) {
		bus, _ := bridge.subs.get("k8s-bus")
		return bus.Credentials != nil && *bus.Credentials == contract.SubscriptionCredentials{User: "bridge", Password: "s3cret-password"},
			fmt.Sprintf("the bridge holds credentials %+v", bus.Credentials)
	})
	getObject(t, client.ObjectKeyFromObject(mb), got)
	var events corev1.EventList
	if err := k8sClient.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal([]any{got.Status, events.Items})
	if strings.Contains(string(shown), "s3cret") {
		t.Errorf("a credential shows in the status or an event: %s", shown)
	}
}

// A cloud-format subscription's verify token (Chatwoot's "Webhook Verify
// Token") comes from the token of the Secret credentialsSecretRef names,
// and reaches the bridge as its credentials' token; a user in that Secret
// makes the subscription invalid, named by the key.
func TestSubscriptionCloudVerifyToken(t *testing.T) {
	ns, mb, bridge := connectedBridge(t)
	createSecret(t, ns, "chatwoot-verify", map[string]string{"token": "s3cret-verify"})
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{{Name: "chatwoot",
			Target: "https://chatwoot.example/webhooks/whatsapp/+4915100000001", Format: msgbridgev1alpha1.SubscriptionFormatCloud,
			CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "chatwoot-verify"}}}
	})
	healthy := map[string]msgbridgev1alpha1.SubscriptionState{"chatwoot": msgbridgev1alpha1.SubscriptionHealthy}
	waitSubscriptions(t, mb, metav1.ConditionTrue, conditions.ReasonSubscriptionsHealthy, healthy)
	chatwoot, _ := bridge.subs.get("k8s-chatwoot")
	if chatwoot.Format != "cloud" || chatwoot.Credentials == nil || *chatwoot.Credentials != (contract.SubscriptionCredentials{Token: "s3cret-verify"}) {
		t.Errorf("k8s-chatwoot in the bridge: format %q, credentials %+v", chatwoot.Format, chatwoot.Credentials)
	}

	patchSecretData(t, ns, "chatwoot-verify", "user", "bridge")
	got := waitSubscriptions(t, mb, metav1.ConditionFalse, conditions.ReasonSubscriptionInvalid,
		map[string]msgbridgev1alpha1.SubscriptionState{"chatwoot": msgbridgev1alpha1.SubscriptionInvalid})
	if m := subscriptionsCondition(got); !strings.Contains(m, "takes only the verify token") || strings.Contains(m, "s3cret") {
		t.Errorf("condition message %q does not name the Secret's extra key (or shows a value)", m)
	}
}

func removeSecretKey(t *testing.T, ns, name, key string) {
	t.Helper()
	var s corev1.Secret
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(s.DeepCopy())
	delete(s.Data, key)
	if err := k8sClient.Patch(context.Background(), &s, patch); err != nil {
		t.Fatal(err)
	}
}

func patchSecretData(t *testing.T, ns, name, key, value string) {
	t.Helper()
	var s corev1.Secret
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(s.DeepCopy())
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[key] = []byte(value)
	if err := k8sClient.Patch(context.Background(), &s, patch); err != nil {
		t.Fatal(err)
	}
}
