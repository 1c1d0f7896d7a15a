package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MessagingBridgeSpec declares one WhatsApp bridge. This first version holds
// the fields every later one keeps; the operator issue completes it.
type MessagingBridgeSpec struct {
	// Webhook is where the bridge posts receipts, incoming messages and
	// session changes. Webhooks are off when it is absent.
	// +optional
	Webhook *WebhookSpec `json:"webhook,omitempty"`

	// MaxFileSize caps one attachment.
	// +optional
	// +kubebuilder:default="50Mi"
	MaxFileSize *resource.Quantity `json:"maxFileSize,omitempty"`

	// Storage sizes the persistent volume that holds the credentials and the
	// message log.
	// +optional
	Storage StorageSpec `json:"storage,omitempty"`

	// Suspend scales the bridge to zero without losing its credentials.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// WebhookSpec is the receiver of the bridge's events.
type WebhookSpec struct {
	// URL receives the events as Standard Webhooks POST requests.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('http://') || self.startsWith('https://')",message="webhook url must be http or https"
	URL string `json:"url"`
}

// StorageSpec is the persistent volume of one bridge.
type StorageSpec struct {
	// Size of the volume.
	// +optional
	// +kubebuilder:default="1Gi"
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the volume; the cluster default when empty.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// MessagingBridgeStatus is what the operator observed of the bridge.
type MessagingBridgeStatus struct {
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciled, Available, SessionConnected, Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MessagingBridge declares one WhatsApp bridge: a StatefulSet with a volume
// for its credentials, a Service and Secrets.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mb
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MessagingBridge struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MessagingBridgeSpec   `json:"spec,omitempty"`
	Status MessagingBridgeStatus `json:"status,omitempty"`
}

// MessagingBridgeList is a list of MessagingBridges.
//
// +kubebuilder:object:root=true
type MessagingBridgeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MessagingBridge `json:"items"`
}
