package apitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Client is an http.Client whose transport validates its traffic against
// the API description (Transport over http.DefaultTransport).
func Client(t testing.TB) *http.Client {
	return &http.Client{Transport: Transport(t, nil)}
}

// Transport wraps base (http.DefaultTransport when nil) so that every
// request it carries and every response it returns is validated against
// the API description; a mismatch fails t (see the package comment). It
// reads each response body whole, and gives the caller a copy.
func Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	t.Helper()
	if base == nil {
		base = http.DefaultTransport
	}
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	return &transport{t: t, base: base, spec: s}
}

type offDocumentKey struct{}

// OffDocument marks r as deliberately outside the API description (an
// unknown path, or a method its path does not serve): Transport then
// requires the bridge's 404 or 405 answer in the error shape instead of
// failing the test for the request.
func OffDocument(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), offDocumentKey{}, true))
}

type transport struct {
	t    testing.TB
	base http.RoundTripper
	spec *spec
}

// operation is a documented operation a request matched.
type operation struct {
	id   string
	path string // as the document spells it, e.g. /api/messages/{id}
	item *v3.PathItem
	op   *v3.Operation
}

func (s *spec) find(r *http.Request) *operation {
	item, errs, path := paths.FindPath(r, s.model, nil)
	if item == nil || len(errs) > 0 {
		return nil
	}
	op := helpers.ExtractOperation(r, item)
	if op == nil || !patternsMatch(r.URL.Path, path, item, op) {
		return nil
	}
	return &operation{id: op.OperationId, path: path, item: item, op: op}
}

// patternsMatch reports whether a path whose first segment is a parameter
// matches the request by that parameter's pattern, as the bridge's router
// decides: the Cloud API door's /{version}/{object_id} is not /session/qr,
// whose first segment is no v<major>.<minor>. The validator matches
// templates by their shape alone. Other parameters are left to the
// request's validation (a bad id is the endpoint's 400, not another path).
func patternsMatch(reqPath, docPath string, item *v3.PathItem, op *v3.Operation) bool {
	got, want := strings.Split(reqPath, "/"), strings.Split(docPath, "/")
	if len(got) < 2 || len(want) < 2 || !strings.HasPrefix(want[1], "{") || !strings.HasSuffix(want[1], "}") {
		return true
	}
	name := strings.Trim(want[1], "{}")
	for _, p := range append(append([]*v3.Parameter{}, item.Parameters...), op.Parameters...) {
		if p.In != "path" || p.Name != name || p.Schema == nil || p.Schema.Schema() == nil || p.Schema.Schema().Pattern == "" {
			continue
		}
		if re, err := regexp.Compile(p.Schema.Schema().Pattern); err == nil && !re.MatchString(got[1]) {
			return false
		}
	}
	return true
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := tr.spec.find(req)
	var reqErrs []*liberrors.ValidationError
	if op != nil {
		reqErrs = tr.spec.checkRequest(req, op)
	}
	resp, err := tr.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("apitest: read the response of %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	tr.judge(req, resp, body, op, reqErrs)
	return resp, nil
}

// judge fails the test when the exchange breaks the document, and records
// the operation's coverage otherwise.
func (tr *transport) judge(req *http.Request, resp *http.Response, body []byte, op *operation, reqErrs []*liberrors.ValidationError) {
	validating.Lock()
	defer validating.Unlock()
	name := req.Method + " " + req.URL.Path
	if off, _ := req.Context().Value(offDocumentKey{}).(bool); off {
		if op != nil {
			tr.t.Errorf("apitest: %s is marked OffDocument but the API description has it (%s)", name, op.id)
		}
		if errs := tr.spec.checkOffDocument(resp, body); errs != "" {
			tr.t.Errorf("apitest: %s (off the document) answered %d:%s", name, resp.StatusCode, errs)
		}
		return
	}
	if op == nil {
		tr.t.Errorf("apitest: %s is not in the API description (it answered %d); describe it in bridge/httpapi/openapi/openapi.yaml", name, resp.StatusCode)
		return
	}
	copied := *resp
	copied.Body = io.NopCloser(bytes.NewReader(body))
	copied.Header = anyMediaType(op.op, resp)
	if ok, errs := tr.spec.validator.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, &copied, op.item, op.path); !ok {
		tr.t.Errorf("apitest: %s (%s) answered %d, which the API description does not allow:%s", name, op.id, resp.StatusCode, describe(errs))
	}
	if len(reqErrs) > 0 && resp.StatusCode < 400 {
		tr.t.Errorf("apitest: %s (%s): the request breaks the API description, yet the bridge accepted it (%d):%s", name, op.id, resp.StatusCode, describe(reqErrs))
	}
	record(tr.t, op.id, resp.StatusCode)
}

// checkRequest validates the request's parameters, credential and body.
// A body that cannot be read again (no GetBody: a stream) is not checked.
func (s *spec) checkRequest(req *http.Request, op *operation) []*liberrors.ValidationError {
	validating.Lock()
	defer validating.Unlock()
	clone := req.Clone(req.Context())
	clone.Body = http.NoBody
	pv := s.validator.GetParameterValidator()
	var out []*liberrors.ValidationError
	for _, check := range []func(*http.Request, *v3.PathItem, string) (bool, []*liberrors.ValidationError){
		pv.ValidatePathParamsWithPathItem, pv.ValidateQueryParamsWithPathItem, pv.ValidateHeaderParamsWithPathItem,
		pv.ValidateCookieParamsWithPathItem, pv.ValidateSecurityWithPathItem,
	} {
		if ok, errs := check(clone, op.item, op.path); !ok {
			out = append(out, errs...)
		}
	}
	hasBody := req.Body != nil && req.Body != http.NoBody
	if hasBody && req.GetBody == nil {
		return out
	}
	if hasBody {
		b, err := req.GetBody()
		if err != nil {
			return out
		}
		clone.Body = b
	}
	if ok, errs := s.validator.GetRequestBodyValidator().ValidateRequestBodyWithPathItem(clone, op.item, op.path); !ok {
		out = append(out, errs...)
	}
	if hasBody {
		out = append(out, s.checkForm(req, op.op)...)
	}
	return out
}

// checkOffDocument requires the router's answer to an undocumented
// request: 404 or 405 with the error shape.
func (s *spec) checkOffDocument(resp *http.Response, body []byte) string {
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		return "\n\twant 404 or 405"
	}
	schema := s.model.Components.Schemas.GetOrZero("Error")
	if schema == nil {
		return "\n\tthe API description has no Error schema"
	}
	if ok, errs := s.schemas.ValidateSchemaBytes(schema.Schema(), body); !ok {
		return describe(errs)
	}
	return ""
}

// anyMediaType is resp's header as the validator should judge it: the
// validator matches a response's content type exactly, so a response the
// description gives as '*/*' (a file of any type) is judged as that.
func anyMediaType(op *v3.Operation, resp *http.Response) http.Header {
	if op.Responses == nil || op.Responses.Codes == nil {
		return resp.Header
	}
	described := op.Responses.Codes.GetOrZero(strconv.Itoa(resp.StatusCode))
	if described == nil || described.Content == nil {
		return resp.Header
	}
	actual, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if _, exact := described.Content.Get(actual); exact {
		return resp.Header
	}
	if _, any := described.Content.Get("*/*"); !any {
		return resp.Header
	}
	h := resp.Header.Clone()
	h.Set("Content-Type", "*/*")
	return h
}
