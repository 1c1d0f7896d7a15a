package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const testAdminToken = "admin-token-0123456789abcdef"

func newBridge(ns, name string) *msgbridgev1alpha1.MessagingBridge {
	return &msgbridgev1alpha1.MessagingBridge{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: msgbridgev1alpha1.MessagingBridgeSpec{
			Webhook: &msgbridgev1alpha1.WebhookSpec{URL: "https://backend.team-a.svc/hooks/whatsapp"},
		},
	}
}

// newBridgeWithKeys is a bridge whose credentials come from the user's
// Secret <name>-keys, so that the test knows the admin token.
func newBridgeWithKeys(t *testing.T, ns, name string) *msgbridgev1alpha1.MessagingBridge {
	t.Helper()
	keys := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-keys"},
		StringData: map[string]string{
			"apiKey":        "api-key-0123456789abcdef",
			"adminToken":    testAdminToken,
			"encryptionKey": testutil.TestKeyHex,
		},
	}
	if err := k8sClient.Create(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	mb := newBridge(ns, name)
	mb.Spec.APIKeySecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: keys.Name, Key: "apiKey"}
	mb.Spec.AdminTokenSecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: keys.Name, Key: "adminToken"}
	mb.Spec.EncryptionKeySecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: keys.Name, Key: "encryptionKey"}
	return mb
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8sClient.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func patchBridge(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, change func(*msgbridgev1alpha1.MessagingBridge)) {
	t.Helper()
	var live msgbridgev1alpha1.MessagingBridge
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(mb), &live); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(live.DeepCopy())
	change(&live)
	if err := k8sClient.Patch(context.Background(), &live, patch); err != nil {
		t.Fatal(err)
	}
}

// The generated CRD is accepted by the real API server, which stores the
// resource and applies the schema defaults.
func TestCRDStoresAndDefaultsMessagingBridge(t *testing.T) {
	needsEnvtest(t)
	ctx := context.Background()
	ns := testNamespace(t)
	mb := newBridge(ns, "sales")
	mb.Spec.Suspend = true
	create(t, mb)

	var got msgbridgev1alpha1.MessagingBridge
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(mb), &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Webhook == nil || got.Spec.Webhook.URL != mb.Spec.Webhook.URL || !got.Spec.Suspend {
		t.Errorf("spec not stored as written: %+v", got.Spec)
	}
	if got.Spec.MaxFileSize == nil || got.Spec.MaxFileSize.Cmp(resource.MustParse("50Mi")) != 0 {
		t.Errorf("maxFileSize default: %v", got.Spec.MaxFileSize)
	}
	if got.Spec.Storage.Size == nil || got.Spec.Storage.Size.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("storage size default: %v", got.Spec.Storage.Size)
	}
	if got.Spec.HeartbeatInterval == nil || got.Spec.HeartbeatInterval.Duration != 15*time.Second {
		t.Errorf("heartbeatInterval default: %v", got.Spec.HeartbeatInterval)
	}
	if len(got.Spec.RetrySchedule) != 3 || got.Spec.RetrySchedule[2].Duration != time.Minute {
		t.Errorf("retrySchedule default: %v", got.Spec.RetrySchedule)
	}
	// Not yet seen by an operator: observedGeneration reads 0, below the
	// generation, which kstatus reads as InProgress.
	if got.Status.ObservedGeneration != 0 || got.Generation != 1 {
		t.Errorf("new resource: generation %d, observedGeneration %d", got.Generation, got.Status.ObservedGeneration)
	}
}

// The API server itself rejects invalid specs: the CRD's markers and CEL
// rules, with no admission webhook.
func TestCRDRejectsInvalidSpecs(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	ref := func(name, key string) *msgbridgev1alpha1.SecretKeyReference {
		return &msgbridgev1alpha1.SecretKeyReference{Name: name, Key: key}
	}
	qty := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	cases := []struct {
		name   string
		mbName string
		change func(*msgbridgev1alpha1.MessagingBridgeSpec)
		want   string
	}{
		{"ftp webhook", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.Webhook.URL = "ftp://backend/hooks" }, "webhook url must be http or https"},
		{"webhook without host", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.Webhook.URL = "https://" }, "absolute URL with a host"},
		{"maxFileSize 512Ki", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.MaxFileSize = qty("512Ki") }, "maxFileSize must be from 1Mi to 2Gi"},
		{"maxFileSize 3Gi", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.MaxFileSize = qty("3Gi") }, "maxFileSize must be from 1Mi to 2Gi"},
		{"11 retry delays", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.RetrySchedule = make([]metav1.Duration, 11)
			for i := range s.RetrySchedule {
				s.RetrySchedule[i] = metav1.Duration{Duration: time.Second}
			}
		}, "must have at most 10 items"},
		{"zero retry delay", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.RetrySchedule = []metav1.Duration{{Duration: 0}}
		}, "each retry delay must be above 0s and at most 6h"},
		{"heartbeat 50ms", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.HeartbeatInterval = &metav1.Duration{Duration: 50 * time.Millisecond}
		}, "heartbeatInterval must be from 100ms to 10m"},
		{"sendRate without unit", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.SendRate = "20" }, "spec.sendRate in body should match"},
		{"sendRate above 100000", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.SendRate = "100001/s" }, "spec.sendRate in body should match"},
		{"typingDelay without per char", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.TypingDelay = "50ms" }, "spec.typingDelay in body should match"},
		{"inboxRetention 0s", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.InboxRetention = &metav1.Duration{}
		}, "inboxRetention must be from 1s to 8760h"},
		{"messageRetention 0s", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.MessageRetention = &metav1.Duration{}
		}, "messageRetention must be from 1s to 8760h"},
		{"mediaRetention two years", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.MediaRetention = &metav1.Duration{Duration: 2 * 8760 * time.Hour}
		}, "mediaRetention must be from 1s to 8760h"},
		{"trustedProxies with a host name", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.TrustedProxies = []string{"10.244.0.0/16", "ingress.example.com"}
		}, "trustedProxies must be CIDRs or IP addresses"},
		{"secret name with capitals", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.APIKeySecretRef = ref("Sales_Keys", "apiKey") }, "DNS-1123 subdomain"},
		{"webhook secret name with slash", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.Webhook.SecretRef = ref("a/b", "secret") }, "DNS-1123 subdomain"},
		{"secret key with slash", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) { s.TOTPSecretRef = ref("keys", "a/b") }, "should match"},
		{"admin token is the api key", "", func(s *msgbridgev1alpha1.MessagingBridgeSpec) {
			s.APIKeySecretRef, s.AdminTokenSecretRef = ref("keys", "k"), ref("keys", "k")
		}, "must not name the same key"},
		{"name too long for a StatefulSet", strings.Repeat("a", 53), func(*msgbridgev1alpha1.MessagingBridgeSpec) {}, "DNS-1035 label of at most 52"},
		{"name starting with a digit", "1sales", func(*msgbridgev1alpha1.MessagingBridgeSpec) {}, "DNS-1035 label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.mbName
			if name == "" {
				name = "bad"
			}
			mb := newBridge(ns, name)
			tc.change(&mb.Spec)
			err := k8sClient.Create(context.Background(), mb)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want an error containing %q", err, tc.want)
			}
		})
	}

	t.Run("trustedProxies of CIDRs and addresses", func(t *testing.T) {
		mb := newBridge(ns, "proxies")
		mb.Spec.TrustedProxies = []string{"10.244.0.0/16", "192.168.1.7", "fd00::/8"}
		create(t, mb)
	})

	t.Run("storage change", func(t *testing.T) {
		mb := newBridge(ns, "storage")
		create(t, mb)
		for _, change := range []func(*msgbridgev1alpha1.StorageSpec){
			func(s *msgbridgev1alpha1.StorageSpec) { s.Size = qty("2Gi") },
			func(s *msgbridgev1alpha1.StorageSpec) { class := "fast"; s.StorageClassName = &class },
		} {
			var live msgbridgev1alpha1.MessagingBridge
			if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(mb), &live); err != nil {
				t.Fatal(err)
			}
			change(&live.Spec.Storage)
			err := k8sClient.Update(context.Background(), &live)
			if err == nil || !strings.Contains(err.Error(), "storage is immutable") {
				t.Fatalf("update: %v, want storage is immutable", err)
			}
		}
	})
}

// A new MessagingBridge gets its generated Secret, Service and StatefulSet,
// the latter two controlled by it, and a status for its generation.
func TestCreatesOwnedObjects(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	create(t, mb)

	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	if got.Status.ObservedGeneration != got.Generation || got.Status.Endpoint != "http://sales."+ns+".svc:8080" {
		t.Errorf("status: %+v", got.Status)
	}
	sts := waitStatefulSet(t, got, anyStatefulSet)
	var svc corev1.Service
	var generated corev1.Secret
	if !getObject(t, client.ObjectKey{Namespace: ns, Name: "sales"}, &svc) ||
		!getObject(t, client.ObjectKey{Namespace: ns, Name: "sales-generated"}, &generated) {
		t.Fatal("Service or generated Secret missing")
	}
	for _, obj := range []client.Object{sts, &svc} {
		if !metav1.IsControlledBy(obj, got) {
			t.Errorf("%T %s is not controlled by the MessagingBridge: %v", obj, obj.GetName(), obj.GetOwnerReferences())
		}
	}
	// The generated Secret is kept on delete by default: no owner, but
	// marked as this MessagingBridge's.
	if specs.SecretOwnership(&generated, got) != specs.Owned || len(generated.OwnerReferences) != 0 {
		t.Errorf("generated Secret: owners %v, annotations %v", generated.OwnerReferences, generated.Annotations)
	}
	for _, key := range []string{specs.GeneratedAPIKey, specs.GeneratedAdminToken, specs.GeneratedEncryptionKey, specs.GeneratedWebhookSecret} {
		if len(generated.Data[key]) == 0 {
			t.Errorf("generated Secret lacks %s", key)
		}
	}
	if v := string(generated.Data[specs.GeneratedWebhookSecret]); !strings.HasPrefix(v, "whsec_") {
		t.Errorf("webhook secret %q", v)
	}
	if *sts.Spec.Replicas != 1 || sts.Spec.Template.Spec.Containers[0].Image != testImage ||
		sts.Spec.Template.Annotations[specs.SecretsHashAnnotation] == "" {
		t.Errorf("StatefulSet: replicas %d, image %s, annotations %v", *sts.Spec.Replicas,
			sts.Spec.Template.Spec.Containers[0].Image, sts.Spec.Template.Annotations)
	}
	if v, _ := envValue(sts, "ADMIN_TOKEN"); v != "secret:sales-generated/adminToken" {
		t.Errorf("ADMIN_TOKEN from %s", v)
	}
	if v, _ := envValue(sts, "MAX_FILE_SIZE"); v != "52428800" {
		t.Errorf("MAX_FILE_SIZE %s", v)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].Name != "http" ||
		svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Selector["app.kubernetes.io/instance"] != "sales" {
		t.Errorf("Service spec: %+v", svc.Spec)
	}
	// No kubelet: the pod is never ready, and the session cannot be read.
	waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionFalse, conditions.ReasonPodNotReady)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionUnknown, conditions.ReasonStatusUnreachable)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionFalse, conditions.ReasonPodNotReady)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionFalse, conditions.ReasonNotStalled)
}

// A spec change reaches the StatefulSet; the status follows the generation.
func TestSpecChangeUpdatesStatefulSet(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	create(t, mb)
	waitStatefulSet(t, mb, anyStatefulSet)

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		q := resource.MustParse("10Mi")
		mb.Spec.MaxFileSize = &q
		mb.Spec.Image = "registry.test/bridge:v2"
		mb.Spec.RetrySchedule = []metav1.Duration{{Duration: time.Second}, {Duration: 2 * time.Minute}}
		mb.Spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}
	})
	waitStatefulSet(t, mb, func(sts *appsv1.StatefulSet) (bool, string) {
		c := sts.Spec.Template.Spec.Containers[0]
		size, _ := envValue(sts, "MAX_FILE_SIZE")
		retries, _ := envValue(sts, "RETRY_SCHEDULE")
		return c.Image == "registry.test/bridge:v2" && size == "10485760" && retries == "1s,2m0s" &&
				c.Resources.Limits.Memory().Cmp(resource.MustParse("256Mi")) == 0,
			"StatefulSet not updated: image " + c.Image + ", MAX_FILE_SIZE " + size + ", RETRY_SCHEDULE " + retries
	})
	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	if got.Status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d, want 2", got.Status.ObservedGeneration)
	}
}

// Rotating a referenced key changes the pod template's hash annotation,
// which rolls the pod; an unrelated key of the same Secret does not.
func TestSecretRotationRollsPod(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{pollInterval: time.Hour}) // only watches may wake it
	mb := newBridgeWithKeys(t, ns, "sales")
	create(t, mb)
	before := waitStatefulSet(t, mb, anyStatefulSet).Spec.Template.Annotations[specs.SecretsHashAnnotation]

	rotate := func(key, value string) {
		var keys corev1.Secret
		getObject(t, client.ObjectKey{Namespace: ns, Name: "sales-keys"}, &keys)
		patch := client.MergeFrom(keys.DeepCopy())
		keys.Data[key] = []byte(value)
		if err := k8sClient.Patch(context.Background(), &keys, patch); err != nil {
			t.Fatal(err)
		}
	}
	rotate("unrelated", "x")
	rotate("apiKey", "api-key-rotated-0123456789")
	after := waitStatefulSet(t, mb, func(sts *appsv1.StatefulSet) (bool, string) {
		return sts.Spec.Template.Annotations[specs.SecretsHashAnnotation] != before, "hash annotation unchanged"
	}).Spec.Template.Annotations[specs.SecretsHashAnnotation]

	// The hash is of the values the bridge reads, nothing else.
	want := specs.SecretsHash(map[string][]byte{
		"API_KEY": []byte("api-key-rotated-0123456789"), "ADMIN_TOKEN": []byte(testAdminToken),
		"ENCRYPTION_KEY": []byte(testutil.TestKeyHex), "WEBHOOK_SECRET": generatedWebhookSecret(t, ns, "sales"),
	})
	if after != want {
		t.Errorf("hash %s, want %s", after, want)
	}
}

func generatedWebhookSecret(t *testing.T, ns, name string) []byte {
	t.Helper()
	var s corev1.Secret
	if !getObject(t, client.ObjectKey{Namespace: ns, Name: name + "-generated"}, &s) {
		t.Fatal("generated Secret missing")
	}
	return s.Data[specs.GeneratedWebhookSecret]
}

// Suspending scales to zero and keeps the volume claim template (and with
// it the PVC, which the retention policy keeps on scale-down).
func TestSuspendScalesToZeroAndKeepsVolume(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	create(t, mb)
	waitStatefulSet(t, mb, anyStatefulSet)

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = true })
	sts := waitStatefulSet(t, mb, func(sts *appsv1.StatefulSet) (bool, string) {
		return *sts.Spec.Replicas == 0, "replicas not 0"
	})
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" {
		t.Errorf("volume claim templates: %v", sts.Spec.VolumeClaimTemplates)
	}
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("retention policy: %+v", p)
	}
	waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionFalse, conditions.ReasonSuspended)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonSuspended)

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = false })
	waitStatefulSet(t, mb, func(sts *appsv1.StatefulSet) (bool, string) {
		return *sts.Spec.Replicas == 1, "replicas not back to 1"
	})
}

// A Secret the spec references but that does not exist stalls the resource
// with a Warning event; creating it recovers at once, through the Secret
// watch, not the next poll.
func TestMissingSecretStallsThenRecovers(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{pollInterval: time.Hour})
	mb := newBridge(ns, "sales")
	mb.Spec.TOTPSecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-totp", Key: "totp"}
	create(t, mb)

	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonSecretNotFound)
	if c := findCondition(got, msgbridgev1alpha1.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != conditions.ReasonSecretNotFound {
		t.Errorf("Ready: %+v", c)
	}
	var sts appsv1.StatefulSet
	if getObject(t, client.ObjectKey{Namespace: ns, Name: "sales"}, &sts) {
		t.Error("a StatefulSet was applied although its Secret is missing")
	}
	waitEvent(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonSecretNotFound)

	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sales-totp"},
		StringData: map[string]string{"totp": "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"},
	})
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionFalse, conditions.ReasonNotStalled)
	sts = *waitStatefulSet(t, mb, anyStatefulSet)
	if v, _ := envValue(&sts, "TOTP_SECRET"); v != "secret:sales-totp/totp" {
		t.Errorf("TOTP_SECRET from %q", v)
	}
}

// The generated Secret's name taken by a user's Secret: the operator
// neither adopts nor changes it, and says so.
func TestNeverAdoptsUserSecret(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mine := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sales-generated"},
		StringData: map[string]string{"note": "mine"},
	}
	create(t, mine)
	mb := newBridge(ns, "sales")
	create(t, mb)

	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonSecretConflict)
	var after corev1.Secret
	getObject(t, client.ObjectKeyFromObject(mine), &after)
	if len(after.Data) != 1 || len(after.OwnerReferences) != 0 || after.ResourceVersion != mine.ResourceVersion {
		t.Errorf("the user's Secret was changed: %+v", after)
	}
}

func findCondition(mb *msgbridgev1alpha1.MessagingBridge, t string) metav1.Condition {
	for _, c := range mb.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// A field the operator owns, changed by someone else, is set back: the
// apply is skipped only while the live object holds what the builder makes.
func TestDriftIsReverted(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	create(t, mb)
	sts := waitStatefulSet(t, mb, anyStatefulSet)

	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.Template.Spec.Containers[0].Image = "someone/else:latest"
	if err := k8sClient.Patch(context.Background(), sts, patch, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, mb, func(sts *appsv1.StatefulSet) (bool, string) {
		img := sts.Spec.Template.Spec.Containers[0].Image
		return img == testImage, "image still " + img
	})
}
