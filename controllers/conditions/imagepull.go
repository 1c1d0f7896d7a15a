package conditions

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// ReasonImagePullFailed is Available=False and Stalled=True while the
// bridge's pod cannot pull its image (a tag that does not exist, a private
// registry without a pull secret, a malformed name): the kubelet retries,
// but only a change of the image or of the registry access ends it.
const ReasonImagePullFailed = "ImagePullFailed"

// imagePullWaits are the waiting reasons of a container whose image the
// kubelet cannot pull.
var imagePullWaits = []string{"ImagePullBackOff", "ErrImagePull", "InvalidImageName"}

// ImagePullStall is the blocker of a bridge pod (nil when there is none yet)
// that waits on an image it cannot pull, nil otherwise.
func ImagePullStall(pod *corev1.Pod) *Blocker {
	if pod == nil {
		return nil
	}
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		w := s.State.Waiting
		if w == nil || !slices.Contains(imagePullWaits, w.Reason) {
			continue
		}
		message := fmt.Sprintf("pod %s cannot pull the image %s of its container %s (%s)", pod.Name, s.Image, s.Name, w.Reason)
		if w.Message != "" {
			message += ": " + w.Message
		}
		return &Blocker{Reason: ReasonImagePullFailed, Message: message +
			"; fix the image (spec.image, or the operator's image) or the registry access (imagePullSecrets)"}
	}
	return nil
}

// ImagePullFailed is Available for a bridge whose pod waits on an image it
// cannot pull: False with the stall's reason; its message stays in Stalled
// alone, as a blocker's does (see Reconciled).
func ImagePullFailed(stall *Blocker) metav1.Condition {
	c := metav1.Condition{Type: msgbridgev1alpha1.ConditionAvailable}
	return with(c, metav1.ConditionFalse, stall.Reason, "waiting for a person: the Stalled condition says what to do")
}
