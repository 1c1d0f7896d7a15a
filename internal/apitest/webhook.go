package apitest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// ValidateWebhook fails t unless body is a webhook event the API
// description documents: its "event" field names an entry of the
// document's webhooks, and the body matches that entry's schema (no
// undocumented field). Call it in every test receiver.
func ValidateWebhook(t testing.TB, body []byte) {
	t.Helper()
	validateWebhook(t, nil, body)
}

// ValidateWebhookRequest is ValidateWebhook that also checks the request's
// Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature) against the document. body is the request's body,
// already read.
func ValidateWebhookRequest(t testing.TB, r *http.Request, body []byte) {
	t.Helper()
	validateWebhook(t, r.Header, body)
}

func validateWebhook(t testing.TB, header http.Header, body []byte) {
	t.Helper()
	validating.Lock()
	defer validating.Unlock()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Event string `json:"event"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.Event == "" {
		t.Errorf("apitest: a webhook body without an \"event\" field (%v): %.200s", err, body)
		return
	}
	op := s.webhook(head.Event)
	if op == nil {
		t.Errorf("apitest: webhook event %q is not in the API description; describe it under webhooks in bridge/httpapi/openapi/openapi.yaml", head.Event)
		return
	}
	schema := webhookSchema(op)
	if schema == nil {
		t.Errorf("apitest: webhook event %q has no application/json schema in the API description", head.Event)
		return
	}
	if ok, errs := s.schemas.ValidateSchemaBytes(schema, body); !ok {
		t.Errorf("apitest: webhook %s breaks the API description:%s\n\tbody: %.500s", head.Event, describe(errs), body)
	}
	if header != nil {
		s.checkWebhookHeaders(t, head.Event, op, header)
	}
	record(t, op.OperationId, 0)
}

func (s *spec) webhook(event string) *v3.Operation {
	if s.model.Webhooks == nil {
		return nil
	}
	item := s.model.Webhooks.GetOrZero(event)
	if item == nil {
		return nil
	}
	return item.Post
}

func webhookSchema(op *v3.Operation) *base.Schema {
	if op.RequestBody == nil || op.RequestBody.Content == nil {
		return nil
	}
	mt := op.RequestBody.Content.GetOrZero("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Schema()
}

// checkWebhookHeaders checks the header parameters of the event's
// operation: present when required, and matching their schemas.
func (s *spec) checkWebhookHeaders(t testing.TB, event string, op *v3.Operation, header http.Header) {
	t.Helper()
	for _, p := range op.Parameters {
		if p.In != "header" {
			continue
		}
		v := header.Get(p.Name)
		if v == "" {
			if p.Required != nil && *p.Required {
				t.Errorf("apitest: webhook %s lacks the %s header", event, p.Name)
			}
			continue
		}
		if p.Schema == nil {
			continue
		}
		if ok, errs := s.schemas.ValidateSchemaObject(p.Schema.Schema(), v); !ok {
			t.Errorf("apitest: webhook %s header %s=%q breaks the API description:%s", event, p.Name, v, describe(errs))
		}
	}
}

// ValidateSchema fails t unless body (JSON) matches the document's
// components schema of that name, such as "AdminState": a client of the
// bridge (the operator's) checks its fixtures against the document with
// it.
func ValidateSchema(t testing.TB, name string, body []byte) {
	t.Helper()
	validating.Lock()
	defer validating.Unlock()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	proxy := s.model.Components.Schemas.GetOrZero(name)
	if proxy == nil {
		t.Errorf("apitest: the API description has no schema %q", name)
		return
	}
	if ok, errs := s.schemas.ValidateSchemaBytes(proxy.Schema(), body); !ok {
		t.Errorf("apitest: %.300s breaks schema %s:%s", body, name, describe(errs))
	}
}
