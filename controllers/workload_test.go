package controllers

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
