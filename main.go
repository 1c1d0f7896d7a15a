// Command manager is the msgbridge operator: it reconciles MessagingBridge
// resources into running bridges.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(msgbridgev1alpha1.AddToScheme(s))
	return s
}

// options are the operator's command-line flags.
type options struct {
	metricsAddr      string
	probeAddr        string
	leaderElect      bool
	leaderElectNS    string
	bridgeImage      string
	pollInterval     time.Duration
	heartbeatRefresh time.Duration
	bridgeTimeout    time.Duration
	concurrency      int
	maxRolling       int
	watchNamespaces  []string
	zap              zap.Options
}

func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; 0 disables it")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of the liveness and readiness probes")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader so that only one replica reconciles at a time")
	fs.StringVar(&o.leaderElectNS, "leader-election-namespace", "",
		"namespace of the leader-election Lease; empty means the operator's own namespace in a cluster, required outside one")
	fs.StringVar(&o.bridgeImage, "bridge-image", defaultBridgeImage(),
		"image of bridges whose spec names none (env BRIDGE_IMAGE); the operator's own image, which ships /bridge")
	fs.DurationVar(&o.pollInterval, "poll-interval", controllers.DefaultPollInterval, "how often each bridge's session state is read")
	fs.DurationVar(&o.heartbeatRefresh, "heartbeat-status-refresh", 5*time.Minute,
		"write a heartbeat that only moved forward into the status once it moved this much; 0 writes it only with another status change")
	fs.DurationVar(&o.bridgeTimeout, "bridge-timeout", bridgeclient.DefaultTimeout, "timeout of one call to a bridge")
	fs.IntVar(&o.concurrency, "max-concurrent-reconciles", 8, "MessagingBridges reconciled in parallel; each may wait on its bridge for up to --bridge-timeout")
	fs.IntVar(&o.maxRolling, "max-rolling-bridges", 5,
		"connected bridges that restart at once to move to a new --bridge-image; the next wave starts as they report connected; 0: all at once")
	fs.Func("watch-namespaces", "comma-separated namespaces whose MessagingBridges the operator reconciles; empty: every namespace",
		func(v string) error {
			o.watchNamespaces = strings.Split(v, ",")
			for _, ns := range o.watchNamespaces {
				if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
					return fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
				}
			}
			return nil
		})
	o.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.validate()
}

// Bounds of the operator's flags. The chart's values.schema.json refuses
// what these refuse (TestValuesSchemaMatchesFlags), so that a bad value
// fails at helm install, not in a crash-looping pod.
const (
	minPollInterval  = time.Second
	minStatusRefresh = time.Second
	minBridgeTimeout = 100 * time.Millisecond
	minConcurrency   = 1
)

// validate refuses flag values the operator cannot work with: a poll every
// nanosecond would flood every bridge and the API server.
func (o options) validate() error {
	var errs []error
	if o.pollInterval < minPollInterval {
		errs = append(errs, fmt.Errorf("--poll-interval=%s: must be at least %s", o.pollInterval, minPollInterval))
	}
	if o.heartbeatRefresh != 0 && o.heartbeatRefresh < minStatusRefresh {
		errs = append(errs, fmt.Errorf("--heartbeat-status-refresh=%s: must be 0 or at least %s", o.heartbeatRefresh, minStatusRefresh))
	}
	if o.bridgeTimeout < minBridgeTimeout {
		errs = append(errs, fmt.Errorf("--bridge-timeout=%s: must be at least %s", o.bridgeTimeout, minBridgeTimeout))
	}
	if o.maxRolling < 0 {
		errs = append(errs, fmt.Errorf("--max-rolling-bridges=%d: must be 0 or more", o.maxRolling))
	}
	if o.concurrency < minConcurrency {
		errs = append(errs, fmt.Errorf("--max-concurrent-reconciles=%d: must be at least %d", o.concurrency, minConcurrency))
	}
	return errors.Join(errs...)
}

func main() {
	o, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	if err := run(o); err != nil {
		ctrl.Log.WithName("setup").Error(err, "operator stopped")
		os.Exit(1)
	}
}

// run builds the manager with the MessagingBridge controller and runs it
// until SIGTERM.
func run(o options) error {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  newScheme(),
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "msgbridge-operator.msgbridge.io",
		LeaderElectionNamespace: o.leaderElectNS,
		// Stepping down on SIGTERM lets the next replica take over at once.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions(o.watchNamespaces),
	})
	if err != nil {
		return fmt.Errorf("create the manager: %w", err)
	}
	reconciler := &controllers.MessagingBridgeReconciler{
		Client:                 mgr.GetClient(),
		Recorder:               mgr.GetEventRecorder("msgbridge-operator"),
		BridgeImage:            o.bridgeImage,
		Bridge:                 &bridgeclient.Client{Timeout: o.bridgeTimeout},
		PollInterval:           o.pollInterval,
		HeartbeatStatusRefresh: o.heartbeatRefresh,
		MaxRollingBridges:      o.maxRolling,
	}
	if err := reconciler.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: o.concurrency}); err != nil {
		return fmt.Errorf("set up the MessagingBridge controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("set up the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("set up the ready check: %w", err)
	}
	ctrl.Log.WithName("setup").Info("starting manager", "version", contract.BuildVersion(), "bridgeImage", o.bridgeImage)
	return mgr.Start(ctrl.SetupSignalHandler())
}

// cacheOptions limits every watch (MessagingBridges, StatefulSets, Services,
// Secrets' metadata) to the watched namespaces, which a namespaced install's
// Roles allow; none watches the whole cluster.
func cacheOptions(namespaces []string) cache.Options {
	if len(namespaces) == 0 {
		return cache.Options{}
	}
	byName := map[string]cache.Config{}
	for _, ns := range namespaces {
		byName[ns] = cache.Config{}
	}
	return cache.Options{DefaultNamespaces: byName}
}

// defaultBridgeImage is BRIDGE_IMAGE, which the manager's Deployment sets to
// its own image (config/manager), else the image `make` tags for this build.
func defaultBridgeImage() string {
	if img := os.Getenv("BRIDGE_IMAGE"); img != "" {
		return img
	}
	// An image tag cannot hold a semantic version's '+', so the raw build
	// version is the tag, as the Makefile's IMG.
	if contract.Version != "" {
		return "msgbridge:" + contract.Version
	}
	return "msgbridge:dev"
}
