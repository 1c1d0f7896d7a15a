// Command manager is the msgbridge operator: it reconciles MessagingBridge
// resources into running bridges.
package main

import (
	"flag"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
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

func main() {
	var (
		metricsAddr      string
		probeAddr        string
		leaderElect      bool
		bridgeImage      string
		pollInterval     time.Duration
		heartbeatRefresh time.Duration
		bridgeTimeout    time.Duration
		concurrency      int
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the liveness and readiness probes")
	flag.BoolVar(&leaderElect, "leader-elect", true, "elect a leader so that only one replica reconciles at a time")
	flag.StringVar(&bridgeImage, "bridge-image", defaultBridgeImage(),
		"image of bridges whose spec names none (env BRIDGE_IMAGE); the operator's own image, which ships /bridge")
	flag.DurationVar(&pollInterval, "poll-interval", controllers.DefaultPollInterval, "how often each bridge's session state is read")
	flag.DurationVar(&heartbeatRefresh, "heartbeat-status-refresh", 5*time.Minute,
		"write a heartbeat that only moved forward into the status once it moved this much; 0 writes it only with another status change")
	flag.DurationVar(&bridgeTimeout, "bridge-timeout", bridgeclient.DefaultTimeout, "timeout of one call to a bridge")
	flag.IntVar(&concurrency, "max-concurrent-reconciles", 8, "MessagingBridges reconciled in parallel; each may wait on its bridge for up to --bridge-timeout")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog := ctrl.Log.WithName("setup")

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 newScheme(),
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "msgbridge-operator.msgbridge.io",
		// Stepping down on SIGTERM lets the next replica take over at once.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		setupLog.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	reconciler := &controllers.MessagingBridgeReconciler{
		Client:                 mgr.GetClient(),
		Recorder:               mgr.GetEventRecorder("msgbridge-operator"),
		BridgeImage:            bridgeImage,
		Bridge:                 &bridgeclient.Client{Timeout: bridgeTimeout},
		PollInterval:           pollInterval,
		HeartbeatStatusRefresh: heartbeatRefresh,
	}
	if err := reconciler.SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: concurrency}); err != nil {
		setupLog.Error(err, "unable to set up the MessagingBridge controller")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up the health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up the ready check")
		os.Exit(1)
	}
	setupLog.Info("starting manager", "version", contract.BuildVersion(), "bridgeImage", bridgeImage)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "manager stopped")
		os.Exit(1)
	}
}

// defaultBridgeImage is BRIDGE_IMAGE, which the manager's Deployment sets to
// its own image (config/manager), else the image `make` tags for this build.
func defaultBridgeImage() string {
	if img := os.Getenv("BRIDGE_IMAGE"); img != "" {
		return img
	}
	return "msgbridge:" + contract.BuildVersion()
}
