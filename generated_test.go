package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/msgbridge/msgbridge/contract"
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

// TestWhatsmeowCopyIsThePatchedModule fails when third_party/whatsmeow, the
// copy of whatsmeow the build uses (go.mod's replace), is anything but the
// pinned module with the series third_party/whatsmeow-patches applied: an
// edit to the copy must be a patch of the series, and a new pin needs
// hack/whatsmeow-copy.sh (hack/whatsmeow-upgrade.sh).
func TestWhatsmeowCopyIsThePatchedModule(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "whatsmeow")
	if msg, err := exec.Command("hack/whatsmeow-copy.sh", fresh).CombinedOutput(); err != nil {
		t.Fatalf("hack/whatsmeow-copy.sh: %v\n%s", err, msg)
	}
	want, got := treeFiles(t, fresh), treeFiles(t, "third_party/whatsmeow")
	for name, content := range want {
		if !bytes.Equal(got[name], content) {
			t.Errorf("third_party/whatsmeow/%s differs from the patched module: run hack/whatsmeow-copy.sh", name)
		}
		delete(got, name)
	}
	for name := range got {
		t.Errorf("third_party/whatsmeow/%s is not in the patched module", name)
	}
}

// treeFiles reads every file under root, by slash-separated relative path.
func treeFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestWAVersionPatternIsTheBridges holds the CRD's pattern for waVersion to
// the grammar the bridge parses WA_VERSION with: a version the API server
// admits must start the bridge.
func TestWAVersionPatternIsTheBridges(t *testing.T) {
	crd, err := os.ReadFile("config/crd/bases/msgbridge.io_messagingbridges.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(crd, []byte("pattern: "+contract.WAVersionPattern+"\n")) {
		t.Errorf("the CRD's waVersion pattern is not contract.WAVersionPattern %s", contract.WAVersionPattern)
	}
}
