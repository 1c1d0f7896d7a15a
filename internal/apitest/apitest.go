// Package apitest holds the bridge's tests to its API description
// (bridge/httpapi/openapi, the contract). It is for tests only.
//
// # Traffic
//
// Transport wraps the http.RoundTripper of a test's client. Every request
// it carries and every response it gets back is checked against the
// document, and a mismatch fails the test (t.Errorf, naming the operation
// and the validator's findings):
//
//   - a path or method the document does not describe;
//   - a response status the operation does not list, a response content
//     type it does not list, or a body that does not match the schema
//     (schemas forbid undocumented fields: additionalProperties is false);
//   - a request that breaks the document (a parameter, a JSON body, the
//     form of POST /send, a missing credential) but that the bridge did
//     not refuse with a 4xx: the bridge accepts something undocumented.
//
// A request that breaks the document and is refused with a 4xx is a test
// of that refusal, and passes. A test that means to call an undocumented
// path or method (to check the 404 or 405 answer) marks its request with
// OffDocument; then the answer must be 404 or 405 with the error shape.
//
// # Webhooks
//
// ValidateWebhook checks a webhook body against the schema of its event
// (its "event" field picks the document's webhooks entry);
// ValidateWebhookRequest also checks the Standard Webhooks headers.
//
// # Coverage
//
// Every operation a Transport carries and every event ValidateWebhook
// sees is recorded with its status code and the test's name, in this
// process (Exercised). Test packages run as separate processes, so when
// the environment variable APITEST_COVERAGE_DIR names a directory each
// process also appends its records to a file of its own there
// (hits-<pid>.tsv, one "operation<TAB>status<TAB>test" line per distinct
// record). After every package has run, a last test reads the directory
// (ReadCoverage) and fails listing the documented operations no test
// called (Uncovered); Report renders the operation-by-test table. The
// Makefile runs it like this (-count=1: a cached package result would
// write no records):
//
//	rm -rf $(COVERAGE) && mkdir -p $(COVERAGE)
//	APITEST_COVERAGE_DIR=$(COVERAGE) go test -count=1 ./...
//	APITEST_COVERAGE_DIR=$(COVERAGE) APITEST_COVERAGE_CHECK=1 \
//		go test -count=1 -run '^TestOpenAPICoverage$' ./bridge/httpapi/openapi
//
// TestOpenAPICoverage skips unless APITEST_COVERAGE_CHECK is set, so that
// it does not judge a partial run (go test ./... runs it alongside the
// packages whose records it reads).
package apitest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi"
)

// spec is the document, parsed once per process.
// validating serialises the validator: libopenapi renders schemas into
// shared state while it validates, which races when several requests or
// webhooks of one test are checked at once.
var validating sync.Mutex

type spec struct {
	model     *v3.Document
	validator validator.Validator
	// schemas validates the parts the library's validator leaves alone
	// (forms, webhooks). One for the whole run: it keeps the schemas it
	// compiled, which under -race take tens of milliseconds each.
	schemas schema_validation.SchemaValidator
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	doc, err := libopenapi.NewDocument(openapi.JSON())
	if err != nil {
		return nil, fmt.Errorf("apitest: parse the API description: %w", err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("apitest: build the API description's model: %w", err)
	}
	opts := []config.Option{config.WithFormatAssertions()}
	v := validator.NewValidatorFromV3Model(&model.Model, opts...)
	return &spec{model: &model.Model, validator: v, schemas: schema_validation.NewSchemaValidator(opts...)}, nil
})

// describe renders the validator's findings, one per line.
func describe(errs []*liberrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n\t%s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			loc := f.FieldPath
			if loc == "" {
				loc = f.KeywordLocation
			}
			fmt.Fprintf(&b, "\n\t\t%s: %s", loc, f.Reason)
		}
	}
	return b.String()
}
