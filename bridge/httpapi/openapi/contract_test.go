package openapi_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// schema returns a components schema of the document as plain JSON.
func schema(t *testing.T, name string) map[string]any {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	s, ok := doc.Components.Schemas[name]
	if !ok {
		t.Fatalf("no schema %s", name)
	}
	return s
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestAuditActionsMatch: the audit record's action enum is audit.Actions.
func TestAuditActionsMatch(t *testing.T) {
	props := schema(t, "AuditRecord")["properties"].(map[string]any)
	got := strs(props["action"].(map[string]any)["enum"])
	var want []string
	for _, a := range audit.Actions {
		want = append(want, string(a))
	}
	if !slices.Equal(got, want) {
		t.Errorf("AuditRecord.action enum %v, audit.Actions %v", got, want)
	}
}

// TestErrorCodesMatch: the description's list of error codes (ErrorCode)
// is bridge.Codes, the table of every code the bridge answers: a code
// added to the bridge without its line in the description fails here, and
// so does a line left for a code the bridge no longer has.
func TestErrorCodesMatch(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range strs(schema(t, "ErrorCode")["enum"]) {
		listed[c] = true
	}
	for _, c := range bridge.Codes {
		if !listed[c.Code] {
			t.Errorf("%s (bridge/codes.go) is missing from ErrorCode's enum in openapi.yaml", c.Code)
		}
		delete(listed, c.Code)
	}
	for c := range listed {
		t.Errorf("%s is in ErrorCode's enum in openapi.yaml but not in bridge/codes.go", c)
	}
}

// TestAdminStateMatchesContract: the schema of GET /api/admin/state has
// exactly contract.AdminState's fields, required but for those added later
// (omitempty: older bridges lack them), and its state and reason enums are
// the contract's; what the bridge encodes validates.
func TestAdminStateMatchesContract(t *testing.T) {
	s := schema(t, "AdminState")
	var fields, always []string
	typ := reflect.TypeFor[contract.AdminState]()
	for i := range typ.NumField() {
		name, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
		if opts != "omitempty" {
			always = append(always, name)
		}
	}
	var props []string
	for p := range s["properties"].(map[string]any) {
		props = append(props, p)
	}
	slices.Sort(props)
	required := strs(s["required"])
	slices.Sort(required)
	slices.Sort(fields)
	slices.Sort(always)
	if !slices.Equal(props, fields) || !slices.Equal(required, always) {
		t.Errorf("AdminState properties %v, required %v; contract.AdminState has %v", props, required, fields)
	}
	var states []string
	for _, st := range contract.SessionStates {
		states = append(states, string(st))
	}
	if got := strs(schema(t, "SessionState")["enum"]); !slices.Equal(got, states) {
		t.Errorf("SessionState enum %v, contract %v", got, states)
	}
	reasons := contract.Reasons
	enum := strs(schema(t, "Reason")["enum"])
	for _, r := range reasons {
		if !slices.Contains(enum, string(r)) {
			t.Errorf("Reason enum lacks %q", r)
		}
	}
	if len(enum) != len(reasons) {
		t.Errorf("Reason enum %v has values the contract does not", enum)
	}

	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, st := range []contract.AdminState{
		{State: contract.StateUnpaired, Version: "0.0.0-dev+abc"},
		{State: contract.StateConnected, Connected: true, Account: "4915123456789", PushName: "Shop",
			LastHeartbeat: &now, ConnectedSince: &now, Version: "1.2.3"},
		{State: contract.StateDisconnected, Reason: contract.ReasonStreamReplaced, Version: contract.BuildVersion()},
	} {
		body, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		apitest.ValidateSchema(t, "AdminState", body)
	}
}

// TestNoNullKeys: outside examples and values, no key of the document
// maps to null. A slip of YAML's flow style (an unquoted comma in
// `{description: a, b}`) adds such a key.
func TestNoNullKeys(t *testing.T) {
	var doc any
	if err := json.Unmarshal(openapi.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				switch {
				case slices.Contains([]string{"example", "examples", "default", "const", "enum"}, k):
				case c == nil:
					t.Errorf("%s/%s is null: a slip of YAML?", path, k)
				default:
					walk(path+"/"+k, c)
				}
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s/%d", path, i), c)
			}
		}
	}
	walk("#", doc)
}
