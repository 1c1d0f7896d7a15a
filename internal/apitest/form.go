package apitest

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"

	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// maxFormField bounds what checkForm reads of one form field (the bridge
// refuses more than 1 MiB of fields anyway).
const maxFormField = 1<<20 + 1

// checkForm validates a form body (multipart/form-data or
// application/x-www-form-urlencoded), which the library leaves alone,
// against its schema: the form becomes a JSON object of its fields, a
// field whose schema is an array becoming the array of its values and a
// file part the placeholder string "<file>". An undocumented field then
// breaks additionalProperties.
func (s *spec) checkForm(req *http.Request, op *v3.Operation) []*liberrors.ValidationError {
	mediaType, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || op.RequestBody == nil || (mediaType != "multipart/form-data" && mediaType != "application/x-www-form-urlencoded") {
		return nil
	}
	mt := op.RequestBody.Content.GetOrZero(mediaType)
	if mt == nil || mt.Schema == nil {
		return nil // the body validator has reported the content type
	}
	schema := mt.Schema.Schema()
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer func() { _ = body.Close() }()
	var fields []formField
	if mediaType == "multipart/form-data" {
		fields, err = multipartFields(body, params["boundary"])
	} else {
		fields, err = urlencodedFields(body)
	}
	if err != nil {
		return []*liberrors.ValidationError{{
			ValidationType: "requestBody", Message: "the " + mediaType + " body is malformed", Reason: err.Error(),
		}}
	}
	_, errs := s.schemas.ValidateSchemaObject(schema, formObject(schema, fields))
	return errs
}

type formField struct{ name, value string }

// formObject groups fields by name: one value per scalar property, an
// array for an array property (or a scalar given twice, so that the
// repetition breaks the schema).
func formObject(schema *base.Schema, fields []formField) map[string]any {
	values := map[string][]string{}
	var order []string
	for _, f := range fields {
		if _, seen := values[f.name]; !seen {
			order = append(order, f.name)
		}
		values[f.name] = append(values[f.name], f.value)
	}
	obj := make(map[string]any, len(order))
	for _, name := range order {
		vs := values[name]
		if len(vs) == 1 && !isArray(schema, name) {
			obj[name] = vs[0]
			continue
		}
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		obj[name] = arr
	}
	return obj
}

func isArray(schema *base.Schema, name string) bool {
	if schema.Properties == nil {
		return false
	}
	p := schema.Properties.GetOrZero(name)
	return p != nil && p.Schema() != nil && slices.Contains(p.Schema().Type, "array")
}

func multipartFields(body io.Reader, boundary string) ([]formField, error) {
	if boundary == "" {
		return nil, errors.New("no boundary")
	}
	mr := multipart.NewReader(body, boundary)
	var out []formField
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if part.FileName() != "" {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return nil, err
			}
			out = append(out, formField{part.FormName(), "<file>"})
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(part, maxFormField))
		if err != nil {
			return nil, err
		}
		out = append(out, formField{part.FormName(), string(raw)})
	}
}

func urlencodedFields(body io.Reader) ([]formField, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxFormField))
	if err != nil {
		return nil, err
	}
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	var out []formField
	for name, vs := range values {
		for _, v := range vs {
			out = append(out, formField{name, v})
		}
	}
	return out, nil
}
