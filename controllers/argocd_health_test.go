package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// The chart's Argo CD health check (charts/msgbridge/files/health.lua) and
// kstatus (Flux, kubectl wait) read the statuses the real operator writes:
// each step below drives the operator into one situation and checks what
// both tools make of the resource as the API server returns it.
func TestArgoCDHealthAndKstatusReadOperatorStatus(t *testing.T) {
	needsEnvtest(t)
	script, err := os.ReadFile(filepath.Join(chartDir, "files", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	ns := testNamespace(t)
	bridge := newFakeBridge(t, testAdminToken)
	bridge.set(bridgeclient.State{State: "unpaired"})
	mb := newBridgeWithKeys(t, ns, "sales")
	create(t, mb)

	expect := func(t *testing.T, situation string, mb *msgbridgev1alpha1.MessagingBridge, argo string, flux kstatus.Status) {
		t.Helper()
		live := liveObject(t, mb)
		status, message := argoCDHealth(t, string(script), live)
		if status != argo {
			t.Errorf("%s: Argo CD health %s (%s), want %s", situation, status, message, argo)
		}
		if message == "" {
			t.Errorf("%s: Argo CD health %s without a message", situation, status)
		}
		res, err := kstatus.Compute(&unstructured.Unstructured{Object: live})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != flux {
			t.Errorf("%s: kstatus %s (%s), want %s", situation, res.Status, res.Message, flux)
		}
	}

	expect(t, "new, before any operator saw it", mb, "Progressing", kstatus.InProgressStatus)

	t.Run("operator running", func(t *testing.T) {
		startOperator(t, ns, operatorOptions{bridges: map[string]string{"sales": bridge.URL}})
		waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionFalse, conditions.ReasonPodNotReady)
		expect(t, "pod not ready", mb, "Progressing", kstatus.InProgressStatus)

		markPodReady(t, mb)
		waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonPairingRequired)
		expect(t, "waiting for pairing", mb, "Suspended", kstatus.InProgressStatus)

		bridge.set(connectedState(0))
		waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionTrue, conditions.ReasonReady)
		expect(t, "connected", mb, "Healthy", kstatus.CurrentStatus)

		bridge.set(connectedState(time.Hour))
		waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonHeartbeatStale)
		expect(t, "heartbeat stale", mb, "Degraded", kstatus.InProgressStatus)

		bridge.set(bridgeclient.State{State: "logged_out", Reason: "logged_out_from_phone"})
		waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonLoggedOut)
		expect(t, "logged out", mb, "Degraded", kstatus.InProgressStatus)

		bridge.set(bridgeclient.State{State: "connecting", Reason: "keepalive_timeout"})
		waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonDisconnected)
		expect(t, "reconnecting", mb, "Progressing", kstatus.InProgressStatus)

		// Issue 44.8: states only a person ends are Stalled, not Progressing.
		bridge.set(bridgeclient.State{State: "disconnected", Reason: "disk_full"})
		waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonDiskFull)
		expect(t, "disk full", mb, "Degraded", kstatus.FailedStatus)

		bridge.set(bridgeclient.State{State: "disconnected", Reason: "client_outdated"})
		waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonClientOutdated)
		expect(t, "client version refused", mb, "Degraded", kstatus.FailedStatus)

		bridge.set(connectedState(0))
		waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionFalse, conditions.ReasonNotStalled)
		expect(t, "connected again", mb, "Healthy", kstatus.CurrentStatus)

		createPod(t, mb, "ImagePullBackOff")
		markPodNotReady(t, mb)
		waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonImagePullFailed)
		waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionFalse, conditions.ReasonImagePullFailed)
		expect(t, "image cannot be pulled", mb, "Degraded", kstatus.FailedStatus)
	})

	// With the operator stopped, a spec change leaves the status one
	// generation behind: its conditions no longer count.
	bridge.set(connectedState(0))
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = true })
	expect(t, "new generation not yet observed", mb, "Progressing", kstatus.InProgressStatus)

	t.Run("operator running again", func(t *testing.T) {
		startOperator(t, ns, operatorOptions{bridges: map[string]string{"sales": bridge.URL}})
		waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionFalse, conditions.ReasonSuspended)
		expect(t, "suspended", mb, "Suspended", kstatus.InProgressStatus)

		stalled := newBridge(ns, "stalled")
		stalled.Spec.APIKeySecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "absent", Key: "apiKey"}
		create(t, stalled)
		waitCondition(t, stalled, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonSecretNotFound)
		expect(t, "stalled on a missing Secret", stalled, "Degraded", kstatus.FailedStatus)
	})
}

// liveObject is mb as the API server returns it, in the JSON form Argo CD
// and kstatus read.
func liveObject(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) map[string]any {
	t.Helper()
	var live msgbridgev1alpha1.MessagingBridge
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(mb), &live); err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&live)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// argoCDHealth runs a health script the way Argo CD does: the resource in the
// global obj, only the safe standard libraries open, and the script's return
// value a table of status and message.
func argoCDHealth(t *testing.T, script string, obj map[string]any) (status, message string) {
	t.Helper()
	state := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer state.Close()
	for name, open := range map[string]lua.LGFunction{
		lua.BaseLibName: lua.OpenBase, lua.TabLibName: lua.OpenTable,
		lua.StringLibName: lua.OpenString, lua.MathLibName: lua.OpenMath,
	} {
		state.Push(state.NewFunction(open))
		state.Push(lua.LString(name))
		state.Call(1, 0)
	}
	state.SetGlobal("obj", toLuaValue(state, obj))
	if err := state.DoString(script); err != nil {
		t.Fatalf("health.lua: %v", err)
	}
	result, ok := state.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health.lua returned %s, want a table", state.Get(-1).Type())
	}
	status = lua.LVAsString(result.RawGetString("status"))
	message = lua.LVAsString(result.RawGetString("message"))
	if !slices.Contains([]string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}, status) {
		t.Fatalf("health.lua returned status %q, which Argo CD does not know", status)
	}
	return status, message
}

// toLuaValue converts decoded JSON into Lua values as Argo CD does: objects
// and arrays become tables (arrays 1-based), numbers become numbers.
func toLuaValue(state *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		table := state.NewTable()
		for k, item := range v {
			table.RawSetString(k, toLuaValue(state, item))
		}
		return table
	case []any:
		table := state.NewTable()
		for _, item := range v {
			table.Append(toLuaValue(state, item))
		}
		return table
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	default:
		panic(fmt.Sprintf("unexpected JSON value of type %T", v))
	}
}

// createPod plays the StatefulSet controller and the kubelet for mb's pod:
// its one container waits with the reason waiting.
func createPod(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, waiting string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: mb.Namespace, Name: mb.Name + "-0"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "bridge", Image: "registry.test/msgbridge:missing"}}},
	}
	create(t, pod)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "bridge", Image: "registry.test/msgbridge:missing",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: waiting, Message: `Back-off pulling image "registry.test/msgbridge:missing"`}},
	}}
	if err := k8sClient.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// markPodNotReady reports mb's StatefulSet with no ready replica, as the
// StatefulSet controller does once its pod stops being ready.
func markPodNotReady(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) {
	t.Helper()
	sts := waitStatefulSet(t, mb, anyStatefulSet)
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Status.ReadyReplicas = 0
	sts.Status.AvailableReplicas = 0
	if err := k8sClient.Status().Patch(context.Background(), sts, patch); err != nil {
		t.Fatal(err)
	}
}
