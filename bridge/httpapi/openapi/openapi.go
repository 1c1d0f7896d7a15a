// Package openapi holds the bridge's API description:
// one OpenAPI 3.1 document, openapi.yaml, describing every endpoint
// the bridge serves and, in its webhooks section, a JSON Schema for every
// event it posts. The bridge serves it as JSON at GET /openapi.json
// (Handler) and renders it at /docs/ (DocsHandler) with a vendored Swagger
// UI bundle (see README.md), so the page needs nothing from outside the
// binary.
//
// The document is written in YAML for people and converted to JSON at build
// time (go generate; openapi.json is committed), keeping its key order
// (which the page shows). The tests validate it with a
// real OpenAPI 3.1 validator, and internal/apitest validates the project's
// HTTP traffic and webhooks against it: an issue that adds an endpoint or
// an event extends openapi.yaml in the same change, or its tests fail.
package openapi

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"strconv"
)

// openapi.json is openapi.yaml converted at build time: the bridge then
// links no YAML parser and converts nothing at start-up.
// TestGeneratedJSONMatchesYAML fails when it is stale.
//
//go:generate go run ./internal/gen openapi.yaml openapi.json

//go:embed openapi.json
var document []byte

//go:embed docs
var docs embed.FS

// DocsCSP is the Content-Security-Policy of /docs/: the dashboard's. The
// page has no inline script or style and loads nothing from elsewhere; the
// vendored stylesheet's data: images were moved to files (vendor-docs.mjs).
// Redoc was tried first and refused: it injects <style> elements, which
// this policy blocks.
const DocsCSP = "default-src 'self'; img-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

// JSON is the document as JSON, as GET /openapi.json serves it.
func JSON() []byte { return bytes.Clone(document) }

// Handler serves GET (and HEAD) /openapi.json: the document, without a
// credential.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w)
			return
		}
		body := document // served as it is, never changed
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
