package specs

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func bridge(change func(*msgbridgev1alpha1.MessagingBridge)) *msgbridgev1alpha1.MessagingBridge {
	size, fileSize := resource.MustParse("1Gi"), resource.MustParse("50Mi")
	mb := &msgbridgev1alpha1.MessagingBridge{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "sales", UID: "0b9c6a5e-1111-4222-8333-444455556666"},
		Spec: msgbridgev1alpha1.MessagingBridgeSpec{
			Webhook:           &msgbridgev1alpha1.WebhookSpec{URL: "https://backend.team-a.svc/hooks/whatsapp"},
			MaxFileSize:       &fileSize,
			Storage:           msgbridgev1alpha1.StorageSpec{Size: &size},
			RetrySchedule:     []metav1.Duration{{Duration: 5 * time.Second}, {Duration: 15 * time.Second}, {Duration: time.Minute}},
			HeartbeatInterval: &metav1.Duration{Duration: 15 * time.Second},
		},
	}
	if change != nil {
		change(mb)
	}
	return mb
}

// golden compares obj, as YAML, with testdata/name; -update rewrites it.
func golden(t *testing.T, name string, obj any) {
	t.Helper()
	got, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./controllers/specs/ -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if intended, run go test ./controllers/specs/ -update\n--- got\n%s", path, got)
	}
}

func TestStatefulSetGolden(t *testing.T) {
	in := StatefulSetInputs{Image: "msgbridge:v1.2.3", SecretsHash: "0123456789abcdef0123456789abcdef"}
	cases := map[string]*msgbridgev1alpha1.MessagingBridge{
		// Every credential generated, CRD defaults (the claim is retained).
		"statefulset-defaults.yaml": bridge(nil),
		// Every credential referenced, a storage class, resources, an image,
		// the claim deleted with the resource, every placement field.
		"statefulset-full.yaml": bridge(func(mb *msgbridgev1alpha1.MessagingBridge) {
			class := "fast"
			mb.Spec.Storage.StorageClassName = &class
			mb.Spec.Image = "registry.example/msgbridge:v2"
			mb.Spec.APIKeySecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-keys", Key: "apiKey"}
			mb.Spec.AdminTokenSecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-keys", Key: "adminToken"}
			mb.Spec.EncryptionKeySecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-keys", Key: "encryptionKey"}
			mb.Spec.TOTPSecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-keys", Key: "totp"}
			mb.Spec.Webhook.SecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-webhook", Key: "secret"}
			mb.Spec.Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			}
			mb.Spec.SendRate = "30/m"
			mb.Spec.TypingDelay = "50ms/char,max=3s"
			mb.Spec.InboxRetention = &metav1.Duration{Duration: 90 * 24 * time.Hour}
			mb.Spec.MessageRetention = &metav1.Duration{Duration: 60 * 24 * time.Hour}
			mb.Spec.MediaRetention = &metav1.Duration{Duration: 30 * time.Minute}
			mb.Spec.TrustedProxies = []string{"10.244.0.0/16", "fd00::/8"}
			mb.Spec.StatusUpdates = true
			mb.Spec.ChannelPosts = true
			mb.Spec.DeletionPolicy = msgbridgev1alpha1.DeletionPolicyDelete
			mb.Spec.NodeSelector = map[string]string{"pool": "bridges"}
			mb.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bridges", Effect: corev1.TaintEffectNoSchedule}}
			mb.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-1a"}}}}}}}}
			mb.Spec.PriorityClassName = "bridges"
			mb.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-credentials"}}
		}),
		// Suspended, no webhook, fields left empty fall back to the bridge.
		"statefulset-suspended.yaml": bridge(func(mb *msgbridgev1alpha1.MessagingBridge) {
			mb.Spec.Suspend = true
			mb.Spec.Webhook = nil
			mb.Spec.MaxFileSize = nil
			mb.Spec.RetrySchedule = nil
			mb.Spec.HeartbeatInterval = nil
		}),
	}
	for file, mb := range cases {
		t.Run(file, func(t *testing.T) { golden(t, file, StatefulSet(mb, in)) })
	}
}

func TestServiceGolden(t *testing.T) {
	golden(t, "service.yaml", Service(bridge(nil)))
}

func TestPodDisruptionBudgetGolden(t *testing.T) {
	golden(t, "poddisruptionbudget.yaml", PodDisruptionBudget(bridge(nil)))
}

func TestCredentials(t *testing.T) {
	ref := func(name, key string) *msgbridgev1alpha1.SecretKeyReference {
		return &msgbridgev1alpha1.SecretKeyReference{Name: name, Key: key}
	}
	cases := []struct {
		name       string
		change     func(*msgbridgev1alpha1.MessagingBridge)
		want       []string // env=secret/key, * when generated
		referenced []string
	}{
		{"all generated", nil, []string{
			"API_KEY=sales-generated/apiKey*", "ADMIN_TOKEN=sales-generated/adminToken*",
			"ENCRYPTION_KEY=sales-generated/encryptionKey*", "WEBHOOK_SECRET=sales-generated/webhookSecret*",
		}, nil},
		{"no webhook, no webhook secret", func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Webhook = nil }, []string{
			"API_KEY=sales-generated/apiKey*", "ADMIN_TOKEN=sales-generated/adminToken*", "ENCRYPTION_KEY=sales-generated/encryptionKey*",
		}, nil},
		{"mixed, shared Secret listed once", func(mb *msgbridgev1alpha1.MessagingBridge) {
			mb.Spec.APIKeySecretRef = ref("keys", "a")
			mb.Spec.AdminTokenSecretRef = ref("keys", "b")
			mb.Spec.TOTPSecretRef = ref("totp", "t")
		}, []string{
			"API_KEY=keys/a", "ADMIN_TOKEN=keys/b", "ENCRYPTION_KEY=sales-generated/encryptionKey*",
			"WEBHOOK_SECRET=sales-generated/webhookSecret*", "TOTP_SECRET=totp/t",
		}, []string{"keys", "totp"}},
		{"subscriptions' signing secrets and NATS credentials", func(mb *msgbridgev1alpha1.MessagingBridge) {
			mb.Spec.Subscriptions = []msgbridgev1alpha1.SubscriptionSpec{
				{Name: "crm", SecretRef: ref("crm-hook", "secret")},
				{Name: "bus", SecretRef: ref("bus-sign", "s"), CredentialsSecretRef: &msgbridgev1alpha1.SecretReference{Name: "nats-creds"}},
			}
		}, []string{
			"API_KEY=sales-generated/apiKey*", "ADMIN_TOKEN=sales-generated/adminToken*",
			"ENCRYPTION_KEY=sales-generated/encryptionKey*", "WEBHOOK_SECRET=sales-generated/webhookSecret*",
		}, []string{"crm-hook", "bus-sign", "nats-creds"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mb := bridge(tc.change)
			var got []string
			for _, c := range Credentials(mb) {
				s := c.Env + "=" + c.Source.Name + "/" + c.Source.Key
				if c.Generated {
					s += "*"
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("credentials\n got %v\nwant %v", got, tc.want)
			}
			if r := ReferencedSecretNames(mb); strings.Join(r, " ") != strings.Join(tc.referenced, " ") {
				t.Errorf("referenced %v, want %v", r, tc.referenced)
			}
		})
	}
}

// zeros is a deterministic "random" source.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestGeneratedSecretData(t *testing.T) {
	mb := bridge(nil)
	data, added, err := GeneratedSecretData(mb, nil, zeros{})
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 4 {
		t.Errorf("added %v", added)
	}
	wantFormats := map[string]string{
		GeneratedAPIKey:        strings.Repeat("A", 43),
		GeneratedAdminToken:    strings.Repeat("A", 43),
		GeneratedEncryptionKey: strings.Repeat("0", 64),
		GeneratedWebhookSecret: "whsec_" + strings.Repeat("A", 43) + "=",
	}
	for key, want := range wantFormats {
		if string(data[key]) != want {
			t.Errorf("%s = %q, want %q", key, data[key], want)
		}
	}

	// Existing keys are kept as they are, even unneeded ones; only the
	// missing one is added.
	existing := map[string][]byte{GeneratedAPIKey: []byte("kept"), GeneratedEncryptionKey: []byte("old"), GeneratedAdminToken: []byte("kept-too")}
	mb.Spec.EncryptionKeySecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "mine", Key: "k"}
	data, added, err = GeneratedSecretData(mb, existing, zeros{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(added, ",") != GeneratedWebhookSecret || string(data[GeneratedAPIKey]) != "kept" || string(data[GeneratedEncryptionKey]) != "old" {
		t.Errorf("added %v, data %q", added, data)
	}
	if string(existing[GeneratedWebhookSecret]) != "" {
		t.Error("the input map was modified")
	}

	// Nothing to add: nothing to write.
	if _, added, _ := GeneratedSecretData(mb, data, zeros{}); len(added) != 0 {
		t.Errorf("added %v to a complete Secret", added)
	}
}

func TestSecretsHash(t *testing.T) {
	base := map[string][]byte{"API_KEY": []byte("a"), "ADMIN_TOKEN": []byte("b")}
	cases := []struct {
		name string
		in   map[string][]byte
		same bool
	}{
		{"same values", map[string][]byte{"ADMIN_TOKEN": []byte("b"), "API_KEY": []byte("a")}, true},
		{"rotated value", map[string][]byte{"API_KEY": []byte("a2"), "ADMIN_TOKEN": []byte("b")}, false},
		{"moved boundary", map[string][]byte{"API_KEY": []byte("ab"), "ADMIN_TOKEN": []byte("")}, false},
		{"added credential", map[string][]byte{"API_KEY": []byte("a"), "ADMIN_TOKEN": []byte("b"), "TOTP_SECRET": nil}, false},
	}
	for _, tc := range cases {
		if got := SecretsHash(tc.in) == SecretsHash(base); got != tc.same {
			t.Errorf("%s: same hash %v, want %v", tc.name, got, tc.same)
		}
	}
}
