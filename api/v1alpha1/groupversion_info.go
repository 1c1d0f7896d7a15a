// Package v1alpha1 holds the msgbridge.io/v1alpha1 API: the MessagingBridge
// resource that declares one WhatsApp bridge.
//
// It depends only on k8s.io/apimachinery, so that clients can import it
// without pulling in controller-runtime.
//
// +kubebuilder:object:generate=true
// +groupName=msgbridge.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "msgbridge.io", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &MessagingBridge{}, &MessagingBridgeList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
