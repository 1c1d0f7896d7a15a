package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	watypes "go.mau.fi/whatsmeow/types"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/specs"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const (
	operatorNS = "msgbridge-system"
	bridgeNS   = "team-a"
	release    = "mb"
	account    = "4915100000001"
	contactNo  = "4915100000002"
	// heartbeat and poll are short so that the ghost budget is seconds.
	heartbeat = 2 * time.Second
	poll      = 2 * time.Second
	// wait bounds every wait for the cluster: pods start in seconds, but the
	// machine is shared and the race detector slows the test.
	wait = 3 * time.Minute
)

// TestChartOnRealCluster installs the chart into a real cluster and runs a
// bridge pod against the simulator through its whole life: linked by QR
// through its Service, a message sent and decrypted, the pod deleted and
// back on the same volume still linked, its API key rotated, the operator
// upgraded and uninstalled, and the account logged out on deletion.
func TestChartOnRealCluster(t *testing.T) {
	needCluster(t)
	testStart := time.Now()
	c, sim := startClusterWithSimulator(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster state at the failure:\n%s\n%s", c.kubectl("get", "all,pvc,pv,mb", "-A", "-o", "wide"),
				c.kubectl("get", "events", "-A", "--sort-by=.lastTimestamp"))
			t.Logf("operator log:\n%s", tail(c.kubectl("logs", "-n", operatorNS, "deploy/"+release+"-msgbridge", "--tail=200")))
		}
	})
	phone, contact := sim.Phone(account), sim.Contact(contactNo, "Alice")
	ctx := context.Background()

	installed := time.Now()
	restrictedNamespace(t, c, operatorNS)
	c.helm(t, "install", release, filepath.Join(repoRoot, "charts", "msgbridge"), "-n", operatorNS,
		"--set", "image.repository=localhost/msgbridge,image.tag=e2e,image.pullPolicy=Never",
		"--set", "pollInterval="+poll.String(), "--wait", "--timeout", "3m")
	report(t, "helm install --wait", time.Since(installed))

	restrictedNamespace(t, c, bridgeNS)
	keys := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: bridgeNS, Name: "sales-keys"},
		StringData: map[string]string{"apiKey": "api-key-one-0123456789abcdef", "adminToken": "admin-token-0123456789abcdef"},
	}
	create(t, c, keys)
	mb := &msgbridgev1alpha1.MessagingBridge{
		ObjectMeta: metav1.ObjectMeta{Namespace: bridgeNS, Name: "sales"},
		Spec: msgbridgev1alpha1.MessagingBridgeSpec{
			Image:               "localhost/msgbridge-wasim:e2e",
			APIKeySecretRef:     &msgbridgev1alpha1.SecretKeyReference{Name: keys.Name, Key: "apiKey"},
			AdminTokenSecretRef: &msgbridgev1alpha1.SecretKeyReference{Name: keys.Name, Key: "adminToken"},
			HeartbeatInterval:   &metav1.Duration{Duration: heartbeat},
			LogoutOnDelete:      true,
		},
	}
	create(t, c, mb)
	waitCondition(t, c, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionTrue)
	report(t, "chart install to Ready bridge pod", time.Since(installed))
	waitCondition(t, c, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, "PairingRequired")

	base := serviceURL(t, c, mb)
	api := apitest.Client(t)
	linked := time.Now()
	qr := getJSON[struct{ QR string }](t, api, base+"/session/qr", contract.AdminTokenHeader, "admin-token-0123456789abcdef")
	device, err := phone.ScanQR(waitCtx(t), qr.QR)
	if err != nil {
		t.Fatalf("the phone scanning the QR code from the Service: %v", err)
	}
	waitCondition(t, c, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, "Connected")
	report(t, "QR scanned to SessionConnected=True", time.Since(linked))

	sent := send(t, api, base, "api-key-one-0123456789abcdef", "hello from the cluster")
	if got, err := contact.WaitMessage(waitCtx(t), sent); err != nil || got.Text() != "hello from the cluster" {
		t.Fatalf("the contact got %v, %v", got, err)
	}

	deletePodAndReconnect(t, c, mb, base, phone, device)
	if page := listMessages(t, api, base, "api-key-one-0123456789abcdef"); !strings.Contains(page, sent) {
		t.Errorf("the message log after the pod came back lacks %s: %s", sent, page)
	}

	rotateAPIKey(t, c, mb, keys, api, base)
	upgradeOperator(t, c, mb)

	logout := time.Now()
	if err := c.client.Delete(ctx, mb); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, wait, func() ([]string, bool) {
		d := phone.Devices()
		return jids(d), len(d) == 0
	}, "the simulator never saw the account logged out")
	waitGone(t, c, mb)
	report(t, "MessagingBridge deleted to logged out and gone", time.Since(logout))

	uninstallKeepsCRD(t, c)
	report(t, "whole e2e test up to teardown", time.Since(testStart))
}

// deletePodAndReconnect deletes the bridge pod: the status must leave
// SessionConnected=True within the ghost budget, and the new pod must come
// back on the same volume and reconnect with its stored credentials.
func deletePodAndReconnect(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge, base string, phone *wasim.User, device watypes.JID) {
	t.Helper()
	pod := bridgePod(t, c, mb)
	volume := claimVolume(t, c, mb)
	watch := watchConditions(t, c, mb)
	deleted := time.Now()
	if err := c.client.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	left := testutil.Receive(t, wait, watch, func(s conditionSeen) bool {
		return s.typ == msgbridgev1alpha1.ConditionSessionConnected && s.status != metav1.ConditionTrue
	}, "SessionConnected never left True after the pod was deleted")
	budget := 3*heartbeat + poll + poll/10 + 2*time.Second
	report(t, "pod deleted to SessionConnected leaving True", left.at.Sub(deleted))
	if left.at.Sub(deleted) > budget {
		t.Errorf("SessionConnected left True %v after the pod was deleted, beyond the ghost budget %v", left.at.Sub(deleted), budget)
	}
	if err := phone.WaitOnline(waitCtx(t), device, false); err != nil {
		t.Fatalf("the old pod's connection never closed: %v", err)
	}
	if err := phone.WaitOnline(waitCtx(t), device, true); err != nil {
		t.Fatalf("the new pod never reconnected: %v", err)
	}
	report(t, "pod deleted to the simulator seeing it reconnected", time.Since(deleted))
	waitCondition(t, c, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, "Connected")
	report(t, "pod deleted to SessionConnected=True again", time.Since(deleted))
	waitServing(t, base)

	if again := bridgePod(t, c, mb); again.UID == pod.UID {
		t.Errorf("the pod %s was not replaced", pod.Name)
	}
	if v := claimVolume(t, c, mb); v != volume {
		t.Errorf("the new pod's claim is bound to %s, the old one's was %s", v, volume)
	}
	if d := phone.Devices(); len(d) != 1 || d[0] != device {
		t.Errorf("the account's devices are %v, want only %v: the bridge paired again", d, device)
	}
}

// rotateAPIKey changes the API key in its Secret: the pod restarts with it.
func rotateAPIKey(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge, keys *corev1.Secret, api *http.Client, base string) {
	t.Helper()
	before := bridgePod(t, c, mb)
	rotated := time.Now()
	var s corev1.Secret
	get(t, c, client.ObjectKeyFromObject(keys), &s)
	s.Data["apiKey"] = []byte("api-key-two-0123456789abcdef")
	if err := c.client.Update(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, wait, func() (string, bool) {
		p := bridgePod(t, c, mb)
		return string(p.UID), p.UID != before.UID && podReady(p)
	}, "the bridge pod did not restart after the API key changed")
	report(t, "API key rotated to the new pod Ready", time.Since(rotated))
	waitServing(t, base)
	listMessages(t, api, base, "api-key-two-0123456789abcdef")
	if code := status(t, api, base+"/api/messages", contract.APIKeyHeader, "api-key-one-0123456789abcdef"); code != http.StatusUnauthorized {
		t.Errorf("the old API key got %d after the rotation, want 401", code)
	}
	waitCondition(t, c, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, "Connected")
}

// upgradeOperator upgrades the release: the operator pod rolls, the bridge
// pod does not.
func upgradeOperator(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge) {
	t.Helper()
	bridge := bridgePod(t, c, mb)
	upgraded := time.Now()
	c.helm(t, "upgrade", release, filepath.Join(repoRoot, "charts", "msgbridge"), "-n", operatorNS,
		"--reuse-values", "--set", "logLevel=debug", "--wait", "--timeout", "3m")
	report(t, "helm upgrade --wait", time.Since(upgraded))
	var d appsv1.Deployment
	get(t, c, client.ObjectKey{Namespace: operatorNS, Name: release + "-msgbridge"}, &d)
	if !strings.Contains(strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "), "--zap-log-level=debug") {
		t.Errorf("the upgrade did not reach the operator: %v", d.Spec.Template.Spec.Containers[0].Args)
	}
	if after := bridgePod(t, c, mb); after.UID != bridge.UID {
		t.Errorf("upgrading the operator restarted the bridge pod")
	}
	waitCondition(t, c, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, "Connected")
}

// uninstallKeepsCRD uninstalls the release with a MessagingBridge left:
// the CRD stays, and with it the resource.
func uninstallKeepsCRD(t *testing.T, c *cluster) {
	t.Helper()
	idle := &msgbridgev1alpha1.MessagingBridge{
		ObjectMeta: metav1.ObjectMeta{Namespace: bridgeNS, Name: "idle"},
		Spec:       msgbridgev1alpha1.MessagingBridgeSpec{Suspend: true},
	}
	create(t, c, idle)
	c.helm(t, "uninstall", release, "-n", operatorNS, "--wait", "--timeout", "3m")
	var crd apiextensionsv1.CustomResourceDefinition
	get(t, c, client.ObjectKey{Name: "messagingbridges.msgbridge.io"}, &crd)
	get(t, c, client.ObjectKeyFromObject(idle), &msgbridgev1alpha1.MessagingBridge{})
	var d appsv1.Deployment
	if err := c.client.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: release + "-msgbridge"}, &d); !apierrors.IsNotFound(err) {
		t.Errorf("the operator Deployment after helm uninstall: %v", err)
	}
}

// ---------------------------------------------------------------- the bridge's API

func serviceURL(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge) string {
	t.Helper()
	var svc corev1.Service
	get(t, c, client.ObjectKey{Namespace: mb.Namespace, Name: specs.ServiceName(mb)}, &svc)
	return "http://" + svc.Spec.ClusterIP + ":" + strconv.Itoa(specs.HTTPPort)
}

func send(t *testing.T, api *http.Client, base, apiKey, text string) string {
	t.Helper()
	form := url.Values{"number": {contactNo}, "type[]": {"text"}, "text[]": {text}}
	req, err := http.NewRequestWithContext(waitCtx(t), http.MethodPost, base+"/send", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(contract.APIKeyHeader, apiKey)
	var res struct {
		Messages []struct {
			WhatsappID string `json:"whatsapp_id"`
			Status     string
		}
	}
	body := do(t, api, req, http.StatusOK)
	// Sent on its attempt; the answer may already carry the contact's
	// receipt, which the simulated phone sends within milliseconds.
	if err := json.Unmarshal(body, &res); err != nil || len(res.Messages) != 1 ||
		!slices.Contains([]string{"Sent", "Delivered", "Read"}, res.Messages[0].Status) {
		t.Fatalf("POST /send: %s (%v)", body, err)
	}
	return res.Messages[0].WhatsappID
}

func listMessages(t *testing.T, api *http.Client, base, apiKey string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(waitCtx(t), http.MethodGet, base+"/api/messages", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(contract.APIKeyHeader, apiKey)
	return string(do(t, api, req, http.StatusOK))
}

func getJSON[T any](t *testing.T, api *http.Client, target, header, value string) T {
	t.Helper()
	req, err := http.NewRequestWithContext(waitCtx(t), http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(header, value)
	var v T
	if body := do(t, api, req, http.StatusOK); json.Unmarshal(body, &v) != nil {
		t.Fatalf("GET %s: %s", target, body)
	}
	return v
}

func status(t *testing.T, api *http.Client, target, header, value string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(waitCtx(t), http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(header, value)
	resp, err := api.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func do(t *testing.T, api *http.Client, req *http.Request, want int) []byte {
	t.Helper()
	resp, err := api.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s (%v), want %d", req.Method, req.URL.Path, resp.StatusCode, body, err, want)
	}
	return body
}

// waitServing waits until the Service reaches a bridge: a pod is Ready a
// moment before kube-proxy routes the Service to it.
func waitServing(t *testing.T, base string) {
	t.Helper()
	plain := &http.Client{Timeout: 5 * time.Second}
	testutil.Poll(t, wait, func() (string, bool) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, base+"/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := plain.Do(req)
		if err != nil {
			return err.Error(), false
		}
		_ = resp.Body.Close()
		return resp.Status, resp.StatusCode == http.StatusOK
	}, "the Service %s never reached the bridge", base)
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// ---------------------------------------------------------------- Kubernetes objects

// restrictedNamespace creates ns with the restricted Pod Security profile
// enforced, so that every pod the chart and the operator make is checked.
func restrictedNamespace(t *testing.T, c *cluster, ns string) {
	t.Helper()
	create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}}})
}

func create(t *testing.T, c *cluster, obj client.Object) {
	t.Helper()
	if err := c.client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func get(t *testing.T, c *cluster, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := c.client.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, key, err)
	}
}

func bridgePod(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge) *corev1.Pod {
	t.Helper()
	return testutil.Poll(t, wait, func() (*corev1.Pod, bool) {
		var p corev1.Pod
		err := c.client.Get(context.Background(), client.ObjectKey{Namespace: mb.Namespace, Name: specs.StatefulSetName(mb) + "-0"}, &p)
		return &p, err == nil && p.DeletionTimestamp == nil
	}, "no bridge pod")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// claimVolume is the volume the bridge's claim is bound to.
func claimVolume(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge) string {
	t.Helper()
	var pvc corev1.PersistentVolumeClaim
	get(t, c, client.ObjectKey{Namespace: mb.Namespace, Name: specs.DataVolumeName + "-" + specs.StatefulSetName(mb) + "-0"}, &pvc)
	if pvc.Spec.VolumeName == "" {
		t.Fatalf("the claim %s is not bound", pvc.Name)
	}
	return pvc.Spec.VolumeName
}

func waitCondition(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge, typ string, want metav1.ConditionStatus, reason ...string) {
	t.Helper()
	testutil.Poll(t, wait, func() (string, bool) {
		var got msgbridgev1alpha1.MessagingBridge
		if err := c.client.Get(context.Background(), client.ObjectKeyFromObject(mb), &got); err != nil {
			return err.Error(), false
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == typ {
				seen := string(cond.Status) + "/" + cond.Reason + ": " + cond.Message
				return seen, cond.Status == want && (len(reason) == 0 || cond.Reason == reason[0])
			}
		}
		return "no " + typ + " condition", false
	}, "%s never became %s %v", typ, want, reason)
}

func waitGone(t *testing.T, c *cluster, obj client.Object) {
	t.Helper()
	testutil.Poll(t, wait, func() (string, bool) {
		err := c.client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		return errString(err), apierrors.IsNotFound(err)
	}, "%s was not deleted", obj.GetName())
}

// conditionSeen is one condition of a MessagingBridge, when the watch saw it.
type conditionSeen struct {
	typ    string
	status metav1.ConditionStatus
	at     time.Time
}

// watchConditions reports each condition of mb as a watch sees it change,
// so that a test can time a transition without polling.
func watchConditions(t *testing.T, c *cluster, mb *msgbridgev1alpha1.MessagingBridge) <-chan conditionSeen {
	t.Helper()
	var list msgbridgev1alpha1.MessagingBridgeList
	w, err := c.client.(client.WithWatch).Watch(context.Background(), &list,
		client.InNamespace(mb.Namespace), client.MatchingFields{"metadata.name": mb.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	out := make(chan conditionSeen, 256)
	go func() {
		for e := range w.ResultChan() {
			got, ok := e.Object.(*msgbridgev1alpha1.MessagingBridge)
			if !ok {
				continue
			}
			for _, cond := range got.Status.Conditions {
				select {
				case out <- conditionSeen{typ: cond.Type, status: cond.Status, at: time.Now()}:
				default:
				}
			}
		}
	}()
	return out
}

func jids(d []watypes.JID) []string {
	out := make([]string, len(d))
	for i, j := range d {
		out[i] = j.String()
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return "exists"
	}
	return err.Error()
}
