package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

func newBridge(ns, name string) *msgbridgev1alpha1.MessagingBridge {
	return &msgbridgev1alpha1.MessagingBridge{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: msgbridgev1alpha1.MessagingBridgeSpec{
			Webhook: &msgbridgev1alpha1.WebhookSpec{URL: "https://backend.team-a.svc/hooks/whatsapp"},
		},
	}
}

// The generated CRD is accepted by the real API server, which stores the
// resource, applies the schema defaults and returns it as written.
func TestCRDStoresAndDefaultsMessagingBridge(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t)
	mb := newBridge(ns, "sales")
	mb.Spec.Suspend = true
	if err := k8sClient.Create(ctx, mb); err != nil {
		t.Fatal(err)
	}

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

	// The short name from the CRD is what kubectl get mb resolves.
	var list msgbridgev1alpha1.MessagingBridgeList
	if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Errorf("list: %v, %d items", err, len(list.Items))
	}
}

func TestCRDRejectsNonHTTPWebhook(t *testing.T) {
	mb := newBridge(testNamespace(t), "bad")
	mb.Spec.Webhook.URL = "ftp://backend/hooks"
	err := k8sClient.Create(context.Background(), mb)
	if err == nil || !strings.Contains(err.Error(), "webhook url must be http or https") {
		t.Fatalf("create with ftp webhook: %v", err)
	}
}

// The reconciler, run by a real manager, records each new generation in the
// status, and its own status writes do not start another round.
func TestReconcilerObservesGenerations(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:     testScheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlConfigForTests(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&MessagingBridgeReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	mb := newBridge(testNamespace(t), "sales")
	if err := k8sClient.Create(ctx, mb); err != nil {
		t.Fatal(err)
	}
	waitObservedGeneration(t, mb, 1)

	// A merge patch, as kubectl sends: the reconciler's status write has
	// already moved the resourceVersion that an Update would have to match.
	patch := client.MergeFrom(mb.DeepCopy())
	mb.Spec.Suspend = true
	if err := k8sClient.Patch(ctx, mb, patch); err != nil {
		t.Fatal(err)
	}
	waitObservedGeneration(t, mb, 2)
}

func waitObservedGeneration(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, want int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got msgbridgev1alpha1.MessagingBridge
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(mb), &got); err != nil {
			t.Fatal(err)
		}
		if got.Status.ObservedGeneration == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("observedGeneration %d, want %d", got.Status.ObservedGeneration, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
