package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const testImage = "registry.test/msgbridge:test"

// operatorOptions tune a test operator; zero values keep fast test defaults.
type operatorOptions struct {
	pollInterval     time.Duration
	heartbeatRefresh time.Duration
	// bridges maps a MessagingBridge name to the URL of its fake bridge;
	// bridges not listed get an address nothing listens on.
	bridges map[string]string
	// wrap lets a test observe the operator's API calls.
	wrap func(client.Client) client.Client
	// config replaces the suite's REST config, to observe the wire.
	config *rest.Config
	// bridgeImage replaces testImage as the default bridge image.
	bridgeImage string
	// maxRolling is MaxRollingBridges.
	maxRolling int
	// bridgeTimeout is the timeout of one call to a bridge; 0 means 1 s.
	bridgeTimeout time.Duration
	// leaderElection makes the manager elect a leader with others of the
	// same options, through a Lease in ns, with short test timings; its
	// cancel then plays a kill: the Lease is not released.
	leaderElection bool
}

// testOperator is a running test operator.
type testOperator struct {
	mgr ctrl.Manager
	// stop stops the manager and waits for it; later calls do nothing.
	stop func()
}

// startOperator runs the reconciler in a real manager, watching only ns so
// that the objects of earlier tests do not reach it.
func startOperator(t *testing.T, ns string, o operatorOptions) *testOperator {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := restConfig
	if o.config != nil {
		cfg = o.config
	}
	opts := ctrl.Options{
		Scheme:     testScheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlConfigForTests(),
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	}
	if o.leaderElection {
		lease, renew, retry := 2*time.Second, 1500*time.Millisecond, 200*time.Millisecond
		opts.LeaderElection = true
		opts.LeaderElectionID = "msgbridge-operator.msgbridge.io"
		opts.LeaderElectionNamespace = ns
		opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &lease, &renew, &retry
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if o.bridgeTimeout == 0 {
		o.bridgeTimeout = time.Second
	}
	if o.pollInterval == 0 {
		o.pollInterval = 200 * time.Millisecond
	}
	if o.bridgeImage == "" {
		o.bridgeImage = testImage
	}
	c := mgr.GetClient()
	if o.wrap != nil {
		c = o.wrap(c)
	}
	r := &MessagingBridgeReconciler{
		Client:                 c,
		Recorder:               mgr.GetEventRecorder("msgbridge-operator"),
		BridgeImage:            o.bridgeImage,
		MaxRollingBridges:      o.maxRolling,
		Bridge:                 &bridgeclient.Client{Timeout: o.bridgeTimeout},
		PollInterval:           o.pollInterval,
		HeartbeatStatusRefresh: o.heartbeatRefresh,
		BridgeURL: func(mb *msgbridgev1alpha1.MessagingBridge) string {
			if u, ok := o.bridges[mb.Name]; ok {
				return u
			}
			return "http://127.0.0.1:1" // refused at once
		},
	}
	if err := r.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			// A leader stopped without releasing its Lease reports it lost.
			err := <-done
			killedLeader := o.leaderElection && err != nil && err.Error() == "leader election lost"
			if err != nil && !killedLeader {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &testOperator{mgr: mgr, stop: stop}
}

// fakeBridge serves GET /api/admin/state and POST /session/logout the way a
// bridge does, with a state the test sets.
type fakeBridge struct {
	*httptest.Server
	token string

	mu      sync.Mutex
	state   bridgeclient.State
	polls   atomic.Int64
	logouts atomic.Int64
	// hung makes the state endpoint answer nothing until the caller gives
	// up, as a bridge on a partitioned node.
	hung atomic.Bool
	// liveHeartbeat makes a connected state's heartbeat the time of each
	// answer, as a bridge that keeps heart-beating.
	liveHeartbeat atomic.Bool
	// subs serves /api/admin/subscriptions.
	subs fakeSubscriptions
	// keys serves /api/admin/keys.
	keys fakeKeys
}

func newFakeBridge(t *testing.T, token string) *fakeBridge {
	t.Helper()
	b := &fakeBridge{token: token}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/admin/state", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(bridgeclient.AdminTokenHeader) != b.token {
			http.Error(w, `{"error":{"code":"unauthorized","message":"wrong credential"}}`, http.StatusUnauthorized)
			return
		}
		b.polls.Add(1)
		if b.hung.Load() {
			<-r.Context().Done()
			return
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		state := b.state
		if b.liveHeartbeat.Load() && state.Connected {
			now := time.Now()
			state.LastHeartbeat = &now
		}
		_ = json.NewEncoder(w).Encode(state)
	})
	mux.HandleFunc("POST /session/logout", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(bridgeclient.AdminTokenHeader) != b.token {
			http.Error(w, `{"error":{"code":"unauthorized","message":"wrong credential"}}`, http.StatusUnauthorized)
			return
		}
		b.logouts.Add(1)
		_, _ = w.Write([]byte(`{"status":"success","message":"logged out"}`))
	})
	b.subs.serve(mux, token)
	b.keys.serve(mux, token)
	b.Server = httptest.NewServer(mux)
	t.Cleanup(b.Close)
	return b
}

func (b *fakeBridge) set(s bridgeclient.State) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state = s
}

// connectedState is a healthy bridge whose heartbeat is heartbeatAge old.
func connectedState(heartbeatAge time.Duration) bridgeclient.State {
	hb := time.Now().Add(-heartbeatAge)
	return bridgeclient.State{State: "connected", Connected: true, Account: "4917012345678", LastHeartbeat: &hb, Version: "test"}
}

// eventually polls check until it reports done, failing the test with its
// last message after timeout. Tests synchronise on the API, never on sleeps.
// check says what it still waits for, as the StatefulSet predicates do.
func eventually(t *testing.T, timeout time.Duration, check func() (bool, string)) {
	t.Helper()
	testutil.Poll(t, timeout, func() (string, bool) {
		done, msg := check()
		return msg, done
	}, "waiting")
}

func getObject(t *testing.T, key client.ObjectKey, obj client.Object) bool {
	t.Helper()
	err := k8sClient.Get(context.Background(), key, obj)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err == nil
}

// waitCondition waits until mb's condition t has the status and reason.
func waitCondition(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, condType string, status metav1.ConditionStatus, reason string) *msgbridgev1alpha1.MessagingBridge {
	t.Helper()
	var got msgbridgev1alpha1.MessagingBridge
	eventually(t, 20*time.Second, func() (bool, string) {
		if !getObject(t, client.ObjectKeyFromObject(mb), &got) {
			return false, "MessagingBridge not found"
		}
		c := meta.FindStatusCondition(got.Status.Conditions, condType)
		if c == nil {
			return false, condType + " not set"
		}
		return c.Status == status && c.Reason == reason && c.ObservedGeneration == got.Generation,
			fmt.Sprintf("%s is %s/%s (%s) at generation %d of %d, want %s/%s", condType, c.Status, c.Reason, c.Message, c.ObservedGeneration, got.Generation, status, reason)
	})
	return &got
}

// waitStatefulSet waits for mb's StatefulSet to exist and satisfy ok.
func waitStatefulSet(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, ok func(*appsv1.StatefulSet) (bool, string)) *appsv1.StatefulSet {
	t.Helper()
	var sts appsv1.StatefulSet
	eventually(t, 20*time.Second, func() (bool, string) {
		if !getObject(t, client.ObjectKey{Namespace: mb.Namespace, Name: mb.Name}, &sts) {
			return false, "StatefulSet not found"
		}
		return ok(&sts)
	})
	return &sts
}

func anyStatefulSet(*appsv1.StatefulSet) (bool, string) { return true, "" }

// markPodReady plays the StatefulSet controller and kubelet, which envtest
// lacks: it reports one ready replica.
func markPodReady(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) {
	t.Helper()
	sts := waitStatefulSet(t, mb, anyStatefulSet)
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Status.ObservedGeneration = sts.Generation
	sts.Status.Replicas = 1
	sts.Status.ReadyReplicas = 1
	sts.Status.AvailableReplicas = 1
	sts.Status.CurrentReplicas = 1
	sts.Status.UpdatedReplicas = 1
	if err := k8sClient.Status().Patch(context.Background(), sts, patch); err != nil {
		t.Fatal(err)
	}
}

func envValue(sts *appsv1.StatefulSet, name string) (string, bool) {
	for _, e := range sts.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				return "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key, true
			}
			return e.Value, true
		}
	}
	return "", false
}

// waitEvent waits for an events.k8s.io Event about the MessagingBridge name.
func waitEvent(t *testing.T, ns, name, eventType, reason string) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		return len(findEvents(t, ns, name, eventType, reason)) > 0, "no " + eventType + " event " + reason
	})
}

func findEvents(t *testing.T, ns, name, eventType, reason string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := k8sClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Type == eventType && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}
