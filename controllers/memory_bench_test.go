package controllers

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// BenchmarkOperatorMemory measures the operator's memory with 1,000
// bridges beside 1 GB of Secrets no bridge reads (issue 18.3; target: at
// most 150 MB RSS). The operator watches the whole cluster, as deployed.
// Two runs over the same objects, each at steady state after a GC:
//
//   - bounded: the operator as built (Secrets cached metadata-only);
//   - cache-all: the same plus a typed Secret informer, which is what the
//     operator did before (Owns and Watches on corev1.Secret), as baseline.
//
// RSS is this process's: the operator and the benchmark's uncached client
// (the API server and etcd are other processes); MiB-rss-before is the
// process before any operator starts (the test binary, its client and the
// objects it wrote, after a GC), the floor both runs share.
//
//	KUBEBUILDER_ASSETS=… go test ./controllers/ -run '^$' -bench OperatorMemory -benchtime 1x -timeout 60m
//
// MSGBRIDGE_BENCH_N and MSGBRIDGE_BENCH_SECRETS_MB change the counts.
func BenchmarkOperatorMemory(b *testing.B) {
	n, secretsMB := 1000, 1024
	if v := os.Getenv("MSGBRIDGE_BENCH_N"); v != "" {
		_, _ = fmt.Sscan(v, &n)
	}
	if v := os.Getenv("MSGBRIDGE_BENCH_SECRETS_MB"); v != "" {
		_, _ = fmt.Sscan(v, &secretsMB)
	}
	cfg := *restConfig
	cfg.QPS, cfg.Burst = -1, 0
	writer, err := client.New(&cfg, client.Options{Scheme: testScheme})
	if err != nil {
		b.Fatal(err)
	}
	blobs := benchNamespace(b)
	const blobSize = 900 << 10
	parallel(b, secretsMB<<20/blobSize, func(i int) error {
		return writer.Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: blobs, Name: fmt.Sprintf("blob-%05d", i)},
			Data:       map[string][]byte{"blob": bytes.Repeat([]byte{byte('a' + i%26)}, blobSize)},
		})
	})
	ns := benchNamespace(b)
	parallel(b, n, func(i int) error {
		return writer.Create(context.Background(), newBridge(ns, fmt.Sprintf("b%04d", i)))
	})
	runtime.GC()
	debug.FreeOSMemory()
	b.ReportMetric(float64(rssKiB())/1024, "MiB-rss-before")
	for range b.N {
		for _, mode := range []struct {
			name     string
			cacheAll bool
		}{{"bounded", false}, {"cache-all", true}} {
			rss, heap := operatorMemory(b, writer, ns, n, mode.cacheAll)
			b.ReportMetric(rss, "MiB-rss-"+mode.name)
			b.ReportMetric(heap, "MiB-heap-"+mode.name)
		}
	}
}

// operatorMemory runs an operator until every bridge is reconciled, and
// returns its RSS and heap in MiB after a GC.
func operatorMemory(b *testing.B, writer client.Client, ns string, n int, cacheAll bool) (rss, heap float64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := *restConfig
	cfg.QPS, cfg.Burst = -1, 0
	mgr, err := ctrl.NewManager(&cfg, ctrl.Options{
		Scheme:     testScheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlConfigForTests(),
	})
	if err != nil {
		b.Fatal(err)
	}
	r := &MessagingBridgeReconciler{
		Client: mgr.GetClient(), BridgeImage: testImage, Bridge: &bridgeclient.Client{Timeout: time.Second},
		PollInterval: time.Minute,
	}
	if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: 8}); err != nil {
		b.Fatal(err)
	}
	if cacheAll {
		if _, err := mgr.GetCache().GetInformer(ctx, &corev1.Secret{}); err != nil {
			b.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Minute)
	for !allReconciled(b, writer, ns, n) {
		if time.Now().After(deadline) {
			b.Fatal("not every bridge reconciled in 10 minutes")
		}
		time.Sleep(time.Second)
	}
	time.Sleep(5 * time.Second) // let the last events settle
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, heap = float64(rssKiB())/1024, float64(ms.HeapInuse)/(1<<20)
	cancel()
	if err := <-done; err != nil {
		b.Error(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	return rss, heap
}

// parallel runs create(0..count-1), 16 at a time.
func parallel(b *testing.B, count int, create func(i int) error) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range count {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := create(i); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
}
