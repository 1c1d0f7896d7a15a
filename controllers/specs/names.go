package specs

import (
	"fmt"

	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// Fixed facts of the bridge container, shared by the StatefulSet, the
// Service and the operator's own calls to the bridge.
const (
	// HTTPPort is the bridge's LISTEN_ADDR port and the Service's port.
	HTTPPort = 8080
	// HTTPPortName names the container port and the Service port.
	HTTPPortName = "http"
	// DataDir is where the volume is mounted: the bridge's DATA_DIR.
	DataDir = "/data"
	// ContainerName is the bridge container's name.
	ContainerName = "bridge"
	// DataVolumeName names the volume claim template.
	DataVolumeName = "data"
	// SecretsHashAnnotation on the pod template carries a hash of every
	// credential the bridge reads, so that rotating one rolls the pod.
	SecretsHashAnnotation = "msgbridge.io/secrets-hash" //nolint:gosec // an annotation name, not a credential
)

// StatefulSetName, ServiceName: the bridge's workload and Service carry the
// MessagingBridge's own name, so that its address is <name>.<namespace>.svc.
func StatefulSetName(mb *msgbridgev1alpha1.MessagingBridge) string { return mb.Name }

// ServiceName is the name of the bridge's Service.
func ServiceName(mb *msgbridgev1alpha1.MessagingBridge) string { return mb.Name }

// GeneratedSecretName is the Secret that holds the credentials the operator
// generated for mb.
func GeneratedSecretName(mb *msgbridgev1alpha1.MessagingBridge) string {
	return mb.Name + GeneratedSecretSuffix
}

// GeneratedSecretSuffix follows the MessagingBridge's name in its generated
// Secret's name.
const GeneratedSecretSuffix = "-generated"

// Endpoint is the bridge's HTTP API address inside the cluster.
func Endpoint(mb *msgbridgev1alpha1.MessagingBridge) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", ServiceName(mb), mb.Namespace, HTTPPort)
}

// SelectorLabels select the bridge's pod. They must never change: a
// StatefulSet's selector is immutable.
func SelectorLabels(mb *msgbridgev1alpha1.MessagingBridge) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "msgbridge",
		"app.kubernetes.io/instance": mb.Name,
	}
}

// Labels go on every object the operator creates for mb.
func Labels(mb *msgbridgev1alpha1.MessagingBridge) map[string]string {
	l := SelectorLabels(mb)
	l["app.kubernetes.io/component"] = "bridge"
	l["app.kubernetes.io/managed-by"] = "msgbridge-operator"
	return l
}

// ownerReference makes mb the controller of an object, so that deleting mb
// deletes it and a change to it reconciles mb.
func ownerReference(mb *msgbridgev1alpha1.MessagingBridge) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(msgbridgev1alpha1.GroupVersion.String()).
		WithKind("MessagingBridge").
		WithName(mb.Name).
		WithUID(mb.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}
