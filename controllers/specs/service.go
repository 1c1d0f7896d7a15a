package specs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// Service is the bridge's in-cluster address, <name>.<namespace>.svc:8080:
// backends send through it and the operator polls the session state.
func Service(mb *msgbridgev1alpha1.MessagingBridge) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(ServiceName(mb), mb.Namespace).
		WithLabels(Labels(mb)).
		WithOwnerReferences(ownerReference(mb)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(corev1.ServiceTypeClusterIP).
			WithSelector(SelectorLabels(mb)).
			WithPorts(corev1ac.ServicePort().
				WithName(HTTPPortName).
				WithProtocol(corev1.ProtocolTCP).
				WithPort(HTTPPort).
				WithTargetPort(intstr.FromString(HTTPPortName))))
}
