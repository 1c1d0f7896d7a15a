package controllers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Issue 18.6: `kubectl apply -f config/samples/` applies every .yaml, .yml
// and .json file of the folder, so each must hold only objects the API
// server knows (a kustomization.yaml would not be); `kubectl apply -k`
// needs the kustomization (TestConfigSampleIsReconciled).
func TestConfigSamplesApplyWithF(t *testing.T) {
	dir := filepath.Join(configDir, "samples")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ns := testNamespace(t)
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		// kubectl's FileExtensions for a folder given to -f.
		if e.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(e.Name())) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range decodeManifests(t, data) {
			obj.SetNamespace(ns) // kubectl's current namespace
			objs = append(objs, obj)
		}
	}
	if len(objs) == 0 {
		t.Fatal("kubectl apply -f config/samples/ would apply nothing")
	}
	dryRunApply(t, objs)
	if got := renderKustomization(t, dir); len(got) != len(objs) {
		t.Errorf("-k renders %d objects, -f applies %d", len(got), len(objs))
	}
}
