package controllers

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// BenchmarkThousandBridges creates 1,000 MessagingBridges at once against a
// real API server and reports: the time until every one has its StatefulSet,
// Service and observedGeneration; the operator's API writes per minute at
// steady state; and the process's RSS (the operator and this test's client;
// the API server and etcd are other processes).
//
//	KUBEBUILDER_ASSETS=… go test ./controllers/ -run '^$' -bench ThousandBridges -benchtime 1x
//
// MSGBRIDGE_BENCH_N changes the count.
func BenchmarkThousandBridges(b *testing.B) {
	needsEnvtest(b)
	n := 1000
	if v := os.Getenv("MSGBRIDGE_BENCH_N"); v != "" {
		_, _ = fmt.Sscan(v, &n)
	}
	for range b.N {
		runThousandBridges(b, n)
	}
}

func runThousandBridges(b *testing.B, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := benchNamespace(b)
	cfg := *restConfig
	cfg.QPS, cfg.Burst = -1, 0 // as ctrl.GetConfig: the API server's fairness limits, not client-go's
	var writes atomic.Int64
	mgr, err := ctrl.NewManager(&cfg, ctrl.Options{
		Scheme:     testScheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlConfigForTests(),
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	r := &MessagingBridgeReconciler{
		Client:       writeCounter{Client: mgr.GetClient(), count: func() { writes.Add(1) }},
		Recorder:     mgr.GetEventRecorder("msgbridge-operator"),
		BridgeImage:  testImage,
		Bridge:       &bridgeclient.Client{},
		PollInterval: 10 * time.Second,
	}
	if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: 8}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache sync")
	}

	writer, err := client.New(&cfg, client.Options{Scheme: testScheme})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := writer.Create(ctx, newBridge(ns, fmt.Sprintf("b%04d", i))); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	created := time.Since(start)

	// Not testutil.Eventually: listing a thousand bridges every few
	// milliseconds would load the API server whose convergence this times.
	deadline := time.Now().Add(5 * time.Minute)
	for !allReconciled(b, writer, ns, n) {
		if time.Now().After(deadline) {
			b.Fatal("not every bridge reconciled in 5 minutes")
		}
		time.Sleep(250 * time.Millisecond)
	}
	converged := time.Since(start)

	// Steady state: after one poll interval for the owned objects' own
	// events to settle, three poll intervals with nothing to change.
	time.Sleep(r.PollInterval)
	writes.Store(0)
	const window = 30 * time.Second
	time.Sleep(window)
	perMinute := float64(writes.Load()) * float64(time.Minute) / float64(window)

	b.ReportMetric(created.Seconds(), "s-create")
	b.ReportMetric(converged.Seconds(), "s-converged")
	b.ReportMetric(perMinute, "writes/min-steady")
	b.ReportMetric(float64(rssKiB())/1024, "MiB-rss")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap")
}

// allReconciled: every bridge has its StatefulSet and Service and has a
// status for its generation.
func allReconciled(b *testing.B, c client.Client, ns string, n int) bool {
	ctx := context.Background()
	var mbs msgbridgev1alpha1.MessagingBridgeList
	var stss appsv1.StatefulSetList
	var svcs corev1.ServiceList
	for _, l := range []client.ObjectList{&mbs, &stss, &svcs} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
	}
	if len(mbs.Items) != n || len(stss.Items) != n || len(svcs.Items) != n {
		return false
	}
	for _, mb := range mbs.Items {
		if mb.Status.ObservedGeneration != mb.Generation {
			return false
		}
	}
	return true
}

func benchNamespace(b *testing.B) string {
	ns := &corev1.Namespace{}
	ns.GenerateName = "bench-"
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		b.Fatal(err)
	}
	return ns.Name
}

func rssKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kib int64
			_, _ = fmt.Sscan(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), &kib)
			return kib
		}
	}
	return 0
}
