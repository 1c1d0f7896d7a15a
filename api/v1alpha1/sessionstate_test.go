package v1alpha1

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/contract"
)

// The CRD's enum of session states holds every state the bridge reports
// (contract.SessionStates) plus the two the operator sets itself; a state
// added to the contract without the marker would be refused by the API
// server when the operator mirrors it.
func TestSessionStateEnumCoversTheContract(t *testing.T) {
	src, err := os.ReadFile("messagingbridge_types.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// \+kubebuilder:validation:Enum=(.*)\ntype SessionState string`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no Enum marker on SessionState")
	}
	enum := strings.Split(string(m[1]), ";")
	want := []string{string(SessionUnknown), string(SessionSuspended)}
	for _, s := range contract.SessionStates {
		want = append(want, string(s))
	}
	slices.Sort(enum)
	slices.Sort(want)
	if !slices.Equal(enum, want) {
		t.Errorf("SessionState enum %v, want the contract's states and unknown, suspended: %v", enum, want)
	}
}
