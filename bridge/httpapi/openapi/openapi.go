// Package openapi holds the bridge's API description:
// one OpenAPI 3.1 document, openapi.yaml, describing every endpoint
// the bridge serves and, in its webhooks section, a JSON Schema for every
// event it posts. The bridge serves it as JSON at GET /openapi.json
// (Handler) and renders it at /docs/ (DocsHandler) with a vendored Swagger
// UI bundle (see README.md), so the page needs nothing from outside the
// binary.
//
// The document is written in YAML for people and converted to JSON once,
// keeping its key order (which the page shows). The tests validate it with a
// real OpenAPI 3.1 validator, and internal/apitest validates the project's
// HTTP traffic and webhooks against it: an issue that adds an endpoint or
// an event extends openapi.yaml in the same change, or its tests fail.
package openapi

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml
var source []byte

//go:embed docs
var docs embed.FS

// DocsCSP is the Content-Security-Policy of /docs/: the dashboard's. The
// page has no inline script or style and loads nothing from elsewhere; the
// vendored stylesheet's data: images were moved to files (vendor-docs.mjs).
// Redoc was tried first and refused: it injects <style> elements, which
// this policy blocks.
const DocsCSP = "default-src 'self'; img-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

// YAML is the document as written.
func YAML() []byte { return bytes.Clone(source) }

var toJSON = sync.OnceValues(func() ([]byte, error) { return yamlToJSON(source) })

// JSON is the document as JSON, as GET /openapi.json serves it. The
// embedded document is fixed at build time and the tests convert it, so a
// failure here is a build that skipped the tests: it panics.
func JSON() []byte {
	b, err := toJSON()
	if err != nil {
		panic("openapi: the embedded document is not valid YAML: " + err.Error())
	}
	return bytes.Clone(b)
}

// Handler serves GET (and HEAD) /openapi.json: the document, without a
// credential.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w)
			return
		}
		body := JSON()
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}

// DocsHandler serves the page that renders the document, and its script
// and style files, under /docs/ (mount it at that prefix; the page reads
// ../openapi.json, so Handler must be mounted at /openapi.json beside it).
func DocsHandler() http.Handler {
	sub, err := fs.Sub(docs, "docs")
	if err != nil {
		panic(err) // "docs" is embedded above: cannot happen
	}
	files := http.StripPrefix("/docs/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", DocsCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}

// methodNotAllowed answers with the API's one error shape.
func methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Allow", "GET, HEAD")
	w.WriteHeader(http.StatusMethodNotAllowed)
	_, _ = w.Write([]byte(`{"error":{"code":"method_not_allowed","message":"method not allowed on this endpoint"}}` + "\n"))
}

// yamlToJSON converts a YAML document to JSON, keeping the order of
// mapping keys (sigs.k8s.io/yaml would sort them).
func yamlToJSON(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want one document", n.Line)
		}
		return writeJSON(buf, n.Content[0])
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			key, _ := json.Marshal(n.Content[i].Value) // a string: cannot fail
			buf.Write(key)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.AliasNode:
		// An anchor used twice (the webhooks' headers, which must stay out
		// of components: generators drop components no path uses).
		return writeJSON(buf, n.Alias)
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("line %d: aliases are not supported", n.Line)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	var v any = n.Value
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
	default:
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	buf.Write(b)
	return nil
}
