package openapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi"
	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi/internal/yamljson"
)

// TestDocumentIsValidOpenAPI31 validates the served (JSON) form of the
// document against the OpenAPI 3.1 specification's schema.
func TestDocumentIsValidOpenAPI31(t *testing.T) {
	doc, err := libopenapi.NewDocument(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Errorf("version %q, want 3.1.0", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("build model: %v", errs)
	}
	ok, verrs := v.ValidateDocument()
	for _, e := range verrs {
		t.Errorf("%s: %s (line %d)", e.Message, e.Reason, e.SpecLine)
		for _, se := range e.SchemaValidationErrors {
			t.Errorf("  %s at %s", se.Reason, se.KeywordLocation)
		}
	}
	if !ok && len(verrs) == 0 {
		t.Error("invalid without a reason")
	}
}

// TestJSONKeepsOrder: the JSON form is the YAML's content, key order kept.
func TestJSONKeepsOrder(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(openapi.JSON(), &m); err != nil {
		t.Fatal(err)
	}
	js := openapi.JSON()
	if i, j := bytes.Index(js, []byte(`"/health"`)), bytes.Index(js, []byte(`"/send"`)); i < 0 || j < 0 || i > j {
		t.Errorf("paths out of the document's order: /health at %d, /send at %d", i, j)
	}
	if m["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v", m["openapi"])
	}
}

// TestGeneratedJSONMatchesYAML: openapi.json, which the bridge embeds, is
// openapi.yaml as it stands; after editing the YAML, run
// go generate ./bridge/httpapi/openapi.
func TestGeneratedJSONMatchesYAML(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := yamljson.Convert(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(openapi.JSON(), want) {
		t.Error("openapi.json is stale: run go generate ./bridge/httpapi/openapi")
	}
}
