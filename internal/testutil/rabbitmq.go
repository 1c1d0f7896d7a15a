package testutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// rabbitMQServers are where Debian's rabbitmq-server package puts the
// broker's start script: the one under /usr/lib runs as the calling user;
// /usr/sbin's wrapper would switch to the rabbitmq user and its
// /var/lib/rabbitmq. RABBITMQ_SERVER overrides both.
var rabbitMQServers = []string{"/usr/lib/rabbitmq/bin/rabbitmq-server", "/usr/sbin/rabbitmq-server"}

// RabbitMQ is a real rabbitmq-server started by a test, with its own node
// name, ports (AMQP, distribution, epmd) and data and log directories
// under the test's temporary directory, so that several run at once and
// none touches the machine's broker. Its data outlives Stop: Start again
// is a broker restart with its durable exchanges, queues and messages.
type RabbitMQ struct {
	tb                   testing.TB
	bin, dir, node       string
	port, distPort, epmd int
	cmd                  *exec.Cmd
	exited               chan struct{}
}

// StartRabbitMQ starts a broker, skipped in -short and, outside CI, when
// rabbitmq-server is not installed (`apt-get install rabbitmq-server`;
// .ci/run installs it). Cold, the Erlang VM and the broker take about
// 6-9 s to start on two cores.
func StartRabbitMQ(tb testing.TB) *RabbitMQ {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts rabbitmq-server")
	}
	bin := rabbitMQServer()
	if bin == "" {
		if os.Getenv("CI") != "" {
			tb.Fatal("rabbitmq-server is not installed (Debian: apt-get install rabbitmq-server)")
		}
		tb.Skip("rabbitmq-server is not installed (Debian: apt-get install rabbitmq-server)")
	}
	r := &RabbitMQ{tb: tb, bin: bin, dir: tb.TempDir(), port: FreePort(tb), distPort: FreePort(tb), epmd: FreePort(tb)}
	r.node = fmt.Sprintf("msgbridge-test-%d-%d@localhost", os.Getpid(), r.port)
	config := fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\nloopback_users = none\n", r.port)
	if err := os.WriteFile(filepath.Join(r.dir, "rabbitmq.conf"), []byte(config), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "enabled_plugins"), []byte("[].\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.cleanup)
	r.Start()
	return r
}

func rabbitMQServer() string {
	if bin := os.Getenv("RABBITMQ_SERVER"); bin != "" {
		return bin
	}
	for _, bin := range rabbitMQServers {
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	return ""
}

// FreePort is a TCP port free on 127.0.0.1 when asked.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// URL is the broker's amqp:// address, without a path or options.
func (r *RabbitMQ) URL() string { return "amqp://127.0.0.1:" + strconv.Itoa(r.port) }

func (r *RabbitMQ) env() []string {
	return append(os.Environ(),
		"HOME="+r.dir, // the Erlang cookie
		"RABBITMQ_NODENAME="+r.node,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(r.port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(r.distPort),
		"ERL_EPMD_PORT="+strconv.Itoa(r.epmd),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(r.dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(r.dir, "log"),
		"RABBITMQ_LOGS="+filepath.Join(r.dir, "log", "broker.log"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(r.dir, "rabbitmq.conf"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(r.dir, "enabled_plugins"),
		"RABBITMQ_PLUGINS_EXPAND_DIR="+filepath.Join(r.dir, "plugins-expand"),
	)
}

// startLimit bounds a broker's start: 5-11 s cold on an idle 2-core
// machine, 29 s and once over 60 s at a load average of 30.
const startLimit = 3 * time.Minute

// Start starts the broker and waits until it takes an AMQP connection.
func (r *RabbitMQ) Start() {
	r.tb.Helper()
	cmd := exec.CommandContext(context.Background(), r.bin) // Stop ends it, not a context
	cmd.Dir, cmd.Env = r.dir, r.env()
	// Its own process group: the start script does not exec the VM, and
	// Stop signals both.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.OpenFile(filepath.Join(r.dir, "server.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); _ = out.Close(); close(r.exited) }()
	var last error
	ready := Wait(startLimit, func() bool {
		select {
		case <-r.exited:
			return true
		default:
		}
		conn, err := amqp.Dial(r.URL() + "/")
		if err != nil {
			last = err
			return false
		}
		_ = conn.Close()
		return true
	})
	select {
	case <-r.exited:
		r.tb.Fatalf("rabbitmq-server exited at start:\n%s", r.tail())
	default:
	}
	if !ready {
		r.tb.Fatalf("rabbitmq-server did not take connections in %v (%v):\n%s", startLimit, last, r.tail())
	}
}

// Stop stops the broker as an orderly shutdown does (SIGTERM) and waits
// for it to exit.
func (r *RabbitMQ) Stop() {
	r.tb.Helper()
	if r.cmd == nil {
		return
	}
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
	}
	r.cmd = nil
}

// cleanup stops the broker and the epmd daemon its VM started on the
// test's own epmd port.
func (r *RabbitMQ) cleanup() {
	r.Stop()
	epmd := exec.CommandContext(context.Background(), "epmd", "-kill")
	epmd.Env = r.env()
	if err := epmd.Run(); err != nil && !errors.Is(err, exec.ErrNotFound) {
		r.tb.Logf("epmd -kill on port %d: %v", r.epmd, err)
	}
}

// tail is the end of the broker's output, for a failure's message.
func (r *RabbitMQ) tail() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "server.out"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
