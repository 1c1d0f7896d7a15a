package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent fails when the committed deepcopy code, CRDs
// or RBAC differ from what `make generate manifests` produces now: it runs
// controller-gen into a temporary folder and compares file by file.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	gen := os.Getenv("CONTROLLER_GEN")
	if gen == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CONTROLLER_GEN is not set; run make test")
		}
		t.Skip("CONTROLLER_GEN is not set; make test sets it")
	}
	out := t.TempDir()
	cmd := exec.Command(gen,
		"object:headerFile=hack/boilerplate.go.txt", "paths=./api/...", "output:object:dir="+filepath.Join(out, "object"),
		"rbac:roleName=manager-role", "crd", "paths=./controllers/...",
		"output:crd:dir="+filepath.Join(out, "crd"), "output:rbac:dir="+filepath.Join(out, "rbac"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, msg)
	}
	pairs := map[string]string{
		"object/zz_generated.deepcopy.go":        "api/v1alpha1/zz_generated.deepcopy.go",
		"crd/msgbridge.io_messagingbridges.yaml": "config/crd/bases/msgbridge.io_messagingbridges.yaml",
		"rbac/role.yaml":                         "config/rbac/role.yaml",
	}
	for fresh, committed := range pairs {
		want, err := os.ReadFile(filepath.Join(out, fresh))
		if err != nil {
			t.Fatalf("controller-gen wrote no %s: %v", fresh, err)
		}
		got, err := os.ReadFile(committed)
		if err != nil {
			t.Fatalf("%s is not committed: %v", committed, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run make generate manifests and commit the result", committed)
		}
	}
	// No generated file may exist that the generators no longer produce.
	crds, _ := filepath.Glob("config/crd/bases/*.yaml")
	fresh, _ := filepath.Glob(filepath.Join(out, "crd", "*.yaml"))
	if len(crds) != len(fresh) {
		t.Errorf("config/crd/bases holds %d CRDs, controller-gen makes %d", len(crds), len(fresh))
	}
}
