package controllers

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/msgbridge/msgbridge/controllers/specs"
)

func TestPermanentAPIError(t *testing.T) {
	sts := schema.GroupResource{Group: "apps", Resource: "statefulsets"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, "sales",
		field.ErrorList{field.Invalid(field.NewPath("spec"), "x", "requests above limits")})
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"validation (422)", invalid, true},
		{"wrapped validation", fmt.Errorf("applying: %w", invalid), true},
		{"bad request", apierrors.NewBadRequest("malformed"), true},
		{"admission refusal", apierrors.NewForbidden(sts, "sales", errors.New("admission webhook \"policy\" denied the request")), true},
		{"exceeded quota: frees up", apierrors.NewForbidden(sts, "sales", errors.New("exceeded quota: compute")), false},
		{"conflict", apierrors.NewConflict(sts, "sales", errors.New("modified")), false},
		{"server timeout", apierrors.NewServerTimeout(sts, "apply", 1), false},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), false},
		{"network", errors.New("connection refused"), false},
	}
	for _, tc := range cases {
		if got := permanentAPIError(tc.err); got != tc.want {
			t.Errorf("%s: permanent %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Issue 44.6: an annotation or label the operator no longer sets is a change
// (DeepDerivative alone read its absence as "unset", so the roll-out mark was
// never removed); fields the API server defaults are not.
func TestSameOwnedMetadata(t *testing.T) {
	build := func(annotations map[string]string, podLabels map[string]string, revisionLimit *int32) *appsv1ac.StatefulSetApplyConfiguration {
		sts := appsv1ac.StatefulSet("sales", "team-a").WithLabels(map[string]string{"app": "msgbridge"})
		if annotations != nil {
			sts.WithAnnotations(annotations)
		}
		spec := appsv1ac.StatefulSetSpec().WithTemplate(corev1ac.PodTemplateSpec().WithLabels(podLabels))
		if revisionLimit != nil {
			spec.WithRevisionHistoryLimit(*revisionLimit)
		}
		return sts.WithSpec(spec)
	}
	mark := map[string]string{specs.RolloutStartedAnnotation: "2026-11-27T22:00:00Z"}
	pod := map[string]string{"app": "msgbridge"}
	defaulted := int32(10)
	cases := []struct {
		name           string
		desired, owned *appsv1ac.StatefulSetApplyConfiguration
		want           bool
	}{
		{"same", build(mark, pod, nil), build(mark, pod, nil), true},
		{"a default the API server filled", build(nil, pod, nil), build(nil, pod, &defaulted), true},
		{"the mark no longer desired", build(nil, pod, nil), build(mark, pod, nil), false},
		{"a new mark", build(mark, pod, nil), build(nil, pod, nil), false},
		{"a pod label dropped", build(nil, map[string]string{}, nil), build(nil, pod, nil), false},
	}
	for _, tc := range cases {
		got, err := sameOwnedMetadata(tc.desired, tc.owned)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: sameOwnedMetadata %v, want %v", tc.name, got, tc.want)
		}
	}
}
