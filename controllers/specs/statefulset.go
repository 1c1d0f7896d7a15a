package specs

import (
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

// nonRootID is the distroless nonroot user the image runs as.
const nonRootID = 65532

// StatefulSetInputs are the facts, beyond mb, that the StatefulSet depends on.
type StatefulSetInputs struct {
	// Image runs when mb.Spec.Image is empty: the operator's own image.
	Image string
	// SecretsHash is SecretsHash of the credentials the bridge reads.
	SecretsHash string
	// RolloutStarted, when set, marks the StatefulSet with
	// RolloutStartedAnnotation: it is moving to a new default image.
	RolloutStarted string
}

// RolloutStartedAnnotation on a bridge's StatefulSet holds when the operator
// moved it to a new default image (RFC 3339). While it is there the bridge
// counts as restarting, against the operator's bound on bridges that
// restart at once; the operator drops it once the bridge is connected again.
const RolloutStartedAnnotation = "msgbridge.io/rollout-started"

// HeartbeatInterval is mb's HEARTBEAT_INTERVAL, defaulted like the bridge.
func HeartbeatInterval(mb *msgbridgev1alpha1.MessagingBridge) time.Duration {
	if mb.Spec.HeartbeatInterval == nil || mb.Spec.HeartbeatInterval.Duration <= 0 {
		return contract.DefaultHeartbeatInterval
	}
	return mb.Spec.HeartbeatInterval.Duration
}

// StatefulSet is the bridge's workload: one pod (none when suspended) with a
// volume for its credentials and message log.
func StatefulSet(mb *msgbridgev1alpha1.MessagingBridge, in StatefulSetInputs) *appsv1ac.StatefulSetApplyConfiguration {
	replicas := int32(1)
	if mb.Spec.Suspend {
		replicas = 0
	}
	image := mb.Spec.Image
	if image == "" {
		image = in.Image
	}
	sts := appsv1ac.StatefulSet(StatefulSetName(mb), mb.Namespace)
	if in.RolloutStarted != "" {
		sts.WithAnnotations(map[string]string{RolloutStartedAnnotation: in.RolloutStarted})
	}
	return sts.
		WithLabels(Labels(mb)).
		WithOwnerReferences(ownerReference(mb)).
		WithSpec(appsv1ac.StatefulSetSpec().
			WithReplicas(replicas).
			WithServiceName(ServiceName(mb)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(mb))).
			// Suspending scales to zero and must keep the credentials;
			// on delete the volume goes only with its encryption key (the
			// deletion policy decides both), never leaving one without
			// the other.
			WithPersistentVolumeClaimRetentionPolicy(appsv1ac.StatefulSetPersistentVolumeClaimRetentionPolicy().
				WithWhenScaled(appsv1.RetainPersistentVolumeClaimRetentionPolicyType).
				WithWhenDeleted(ClaimRetention(mb))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(Labels(mb)).
				WithAnnotations(map[string]string{
					SecretsHashAnnotation:                     in.SecretsHash,
					"kubectl.kubernetes.io/default-container": ContainerName,
				}).
				WithSpec(podSpec(mb, image))).
			WithVolumeClaimTemplates(volumeClaimTemplate(mb)))
}

func podSpec(mb *msgbridgev1alpha1.MessagingBridge, image string) *corev1ac.PodSpecApplyConfiguration {
	return withPlacement(mb, corev1ac.PodSpec()).
		// The bridge never calls the Kubernetes API.
		WithAutomountServiceAccountToken(false).
		// Service links would put one env var per Service of the namespace
		// beside the bridge's settings.
		WithEnableServiceLinks(false).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(nonRootID).
			WithRunAsGroup(nonRootID).
			WithFSGroup(nonRootID).
			WithFSGroupChangePolicy(corev1.FSGroupChangeOnRootMismatch).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(container(mb, image)).
		WithVolumes(
			// The root filesystem is read-only; Go spills large multipart
			// uploads (POST /send attachments) to os.TempDir().
			corev1ac.Volume().WithName("tmp").WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		)
}

func container(mb *msgbridgev1alpha1.MessagingBridge, image string) *corev1ac.ContainerApplyConfiguration {
	c := corev1ac.Container().
		WithName(ContainerName).
		WithImage(image).
		WithCommand("/bridge").
		WithPorts(corev1ac.ContainerPort().WithName(HTTPPortName).WithContainerPort(HTTPPort).WithProtocol(corev1.ProtocolTCP)).
		WithEnv(env(mb)...).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName(DataVolumeName).WithMountPath(DataDir),
			corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp"),
		).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithRunAsNonRoot(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))).
		// /health reports the process, never the WhatsApp link: a bridge
		// waiting to be paired must stay reachable.
		WithLivenessProbe(healthProbe().WithFailureThreshold(6)).
		WithReadinessProbe(healthProbe().WithFailureThreshold(3))
	r := resourceRequirements(mb.Spec.Resources)
	if r == nil {
		r = resourceRequirements(DefaultResources)
	}
	return c.WithResources(r)
}

// DefaultResources are the bridge container's resources when the spec sets
// none: a bridge of one account idles at a few millicores and tens of MiB.
// The requests let the scheduler count bridges; the memory limit bounds a
// leak; no CPU limit, whose throttling would delay WhatsApp keepalives.
var DefaultResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
}

// withPlacement sets where the bridge pod may run, as the spec says; fields
// the spec leaves empty are left out.
func withPlacement(mb *msgbridgev1alpha1.MessagingBridge, p *corev1ac.PodSpecApplyConfiguration) *corev1ac.PodSpecApplyConfiguration {
	s := mb.Spec
	if len(s.NodeSelector) > 0 {
		p.WithNodeSelector(maps.Clone(s.NodeSelector))
	}
	if s.PriorityClassName != "" {
		p.WithPriorityClassName(s.PriorityClassName)
	}
	for _, ref := range s.ImagePullSecrets {
		p.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(ref.Name))
	}
	if s.Affinity != nil {
		p.Affinity = asApplyConfiguration[corev1ac.AffinityApplyConfiguration](s.Affinity)
	}
	for i := range s.Tolerations {
		p.WithTolerations(asApplyConfiguration[corev1ac.TolerationApplyConfiguration](&s.Tolerations[i]))
	}
	return p
}

// asApplyConfiguration converts a typed API object into its apply
// configuration, which has the same JSON form.
func asApplyConfiguration[T any](v any) *T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a typed API object always marshals
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err) // the same JSON form
	}
	return &out
}

func healthProbe() *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().
		WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/health").WithPort(intstr.FromString(HTTPPortName))).
		WithPeriodSeconds(10).
		WithTimeoutSeconds(3)
}

// env is the bridge's settings: credentials from Secrets, the rest plain.
// Settings the spec leaves empty are left out, so the bridge's own default
// applies.
func env(mb *msgbridgev1alpha1.MessagingBridge) []*corev1ac.EnvVarApplyConfiguration {
	plain := func(name, value string) *corev1ac.EnvVarApplyConfiguration {
		return corev1ac.EnvVar().WithName(name).WithValue(value)
	}
	out := []*corev1ac.EnvVarApplyConfiguration{
		plain(contract.EnvListenAddr, ":"+strconv.Itoa(HTTPPort)),
		plain(contract.EnvDataDir, DataDir),
	}
	for _, c := range Credentials(mb) {
		out = append(out, corev1ac.EnvVar().WithName(c.Env).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(c.Source.Name).WithKey(c.Source.Key))))
	}
	if mb.Spec.Webhook != nil {
		out = append(out, plain(contract.EnvWebhookURL, mb.Spec.Webhook.URL))
	}
	if mb.Spec.MaxFileSize != nil {
		out = append(out, plain(contract.EnvMaxFileSize, strconv.FormatInt(mb.Spec.MaxFileSize.Value(), 10)))
	}
	if len(mb.Spec.RetrySchedule) > 0 {
		delays := make([]string, len(mb.Spec.RetrySchedule))
		for i, d := range mb.Spec.RetrySchedule {
			delays[i] = d.Duration.String()
		}
		out = append(out, plain(contract.EnvRetrySchedule, strings.Join(delays, ",")))
	}
	out = append(out, plain(contract.EnvHeartbeatInterval, HeartbeatInterval(mb).String()))
	return append(out, accountEnv(mb, plain)...)
}

// accountEnv is the settings that protect the account and bound what it
// keeps; each is left out when the spec leaves it empty.
func accountEnv(mb *msgbridgev1alpha1.MessagingBridge, plain func(name, value string) *corev1ac.EnvVarApplyConfiguration) []*corev1ac.EnvVarApplyConfiguration {
	var out []*corev1ac.EnvVarApplyConfiguration
	for _, s := range []struct{ env, value string }{
		{contract.EnvSendRate, mb.Spec.SendRate},
		{contract.EnvTypingDelay, mb.Spec.TypingDelay},
		{contract.EnvInboxRetention, durationOrEmpty(mb.Spec.InboxRetention)},
		{contract.EnvMessageRetention, durationOrEmpty(mb.Spec.MessageRetention)},
		{contract.EnvMediaRetention, durationOrEmpty(mb.Spec.MediaRetention)},
		{contract.EnvTrustedProxies, strings.Join(mb.Spec.TrustedProxies, ",")},
		{contract.EnvStatusUpdates, onOrEmpty(mb.Spec.StatusUpdates)},
		{contract.EnvChannelPosts, onOrEmpty(mb.Spec.ChannelPosts)},
		{contract.EnvWAVersion, mb.Spec.WAVersion},
		{contract.EnvRejectCalls, mb.Spec.RejectCalls},
		{contract.EnvConnectJitter, durationOrEmpty(mb.Spec.ConnectJitter)},
		{contract.EnvRejectCallsReply, mb.Spec.RejectCallsReply},
	} {
		if s.value != "" {
			out = append(out, plain(s.env, s.value))
		}
	}
	return out
}

// onOrEmpty is a switch as the bridge reads it: on, or left out for its
// default, off.
func onOrEmpty(on bool) string {
	if on {
		return "on"
	}
	return ""
}

func durationOrEmpty(d *metav1.Duration) string {
	if d == nil {
		return ""
	}
	return d.Duration.String()
}

func volumeClaimTemplate(mb *msgbridgev1alpha1.MessagingBridge) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	size := resource.MustParse("1Gi") // the CRD default, for objects stored before it
	if mb.Spec.Storage.Size != nil {
		size = *mb.Spec.Storage.Size
	}
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce).
		WithResources(corev1ac.VolumeResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceStorage: size}))
	if mb.Spec.Storage.StorageClassName != nil {
		spec.WithStorageClassName(*mb.Spec.Storage.StorageClassName)
	}
	// Not corev1ac.PersistentVolumeClaim(): a template carries no kind,
	// apiVersion or namespace, and the live object's extract has none.
	template := &corev1ac.PersistentVolumeClaimApplyConfiguration{}
	return template.WithName(DataVolumeName).
		WithLabels(SelectorLabels(mb)).
		WithSpec(spec)
}

func resourceRequirements(r corev1.ResourceRequirements) *corev1ac.ResourceRequirementsApplyConfiguration {
	if len(r.Limits) == 0 && len(r.Requests) == 0 && len(r.Claims) == 0 {
		return nil
	}
	// Copies: controller-runtime decodes the apply's answer into the
	// apply configuration, which must not write into the spec's maps or
	// into DefaultResources, shared by every round.
	out := corev1ac.ResourceRequirements()
	if len(r.Limits) > 0 {
		out.WithLimits(maps.Clone(r.Limits))
	}
	if len(r.Requests) > 0 {
		out.WithRequests(maps.Clone(r.Requests))
	}
	for _, c := range r.Claims {
		out.WithClaims(corev1ac.ResourceClaim().WithName(c.Name).WithRequest(c.Request))
	}
	return out
}
