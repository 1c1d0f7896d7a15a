package cloudapi

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
)

// errNoTemplates answers the template endpoints of a door without a store.
var errNoTemplates = bridge.Errorf(bridge.KindUnavailable, bridge.CodeTemplatesUnavailable, "this bridge keeps no templates")

// Paging of the template list, as Graph's.
const (
	defaultTemplatePage = 25
	maxTemplatePage     = 1000
)

// listTemplates is GET /{version}/{waba_id}/message_templates: the
// templates, ?name= only that name (Chatwoot's CSAT check reads data[0]),
// ?limit= a page of that many (25 when none) after ?after=, a cursor of
// paging.cursors; paging.next is the next page's URL while more follow.
func (d *Door) listTemplates(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkWABA(r); err != nil {
		return err
	}
	q, err := templateQuery(r.URL.Query())
	if err != nil {
		return err
	}
	list, more := []Template{}, false
	if d.cfg.Templates != nil {
		if list, more, err = d.cfg.Templates.List(r.Context(), q); err != nil {
			return err
		}
	}
	paging := map[string]any{"cursors": map[string]string{}}
	if len(list) > 0 {
		paging["cursors"] = map[string]string{
			"before": templateCursor(list[0]), "after": templateCursor(list[len(list)-1])}
	}
	if more {
		next := *r.URL
		values := next.Query()
		values.Set("after", templateCursor(list[len(list)-1]))
		next.RawQuery = values.Encode()
		paging["next"] = baseURL(r) + next.RequestURI()
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list, "paging": paging})
	return nil
}

// templateQuery reads the list's name, limit and after.
func templateQuery(v url.Values) (TemplateQuery, error) {
	q := TemplateQuery{Name: v.Get("name"), Limit: defaultTemplatePage}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return q, invalidParam("invalid_limit", "limit is a positive number")
		}
		q.Limit = min(n, maxTemplatePage)
	}
	if a := v.Get("after"); a != "" {
		raw, err := base64.RawURLEncoding.DecodeString(a)
		name, lang, ok := strings.Cut(string(raw), "\x00")
		if err != nil || !ok {
			return q, invalidParam("invalid_cursor", "after is a cursor of a previous page's paging.cursors")
		}
		q.AfterName, q.AfterLanguage = name, lang
	}
	return q, nil
}

// templateCursor is the cursor at t: its name and language.
func templateCursor(t Template) string {
	return base64.RawURLEncoding.EncodeToString([]byte(t.Name + "\x00" + t.Language))
}

// createTemplate is POST /{version}/{waba_id}/message_templates.
func (d *Door) createTemplate(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkWABA(r); err != nil {
		return err
	}
	if d.cfg.Templates == nil {
		return errNoTemplates
	}
	var t Template
	if err := decodeBody(w, r, &t); err != nil {
		return err
	}
	switch {
	case !validTemplateName(t.Name):
		return invalidParam("invalid_template_name", "name is 1-512 lowercase letters, digits and underscores")
	case t.Language == "" || len(t.Language) > 16:
		return invalidParam("invalid_template_language", "language is a language code, e.g. en_US")
	case t.Category == "":
		return invalidParam("invalid_template_category", "category is MARKETING, UTILITY or AUTHENTICATION")
	case len(t.Components) == 0:
		return invalidParam("missing_components", "a template needs components")
	}
	switch t.ParameterFormat = strings.ToUpper(t.ParameterFormat); t.ParameterFormat {
	case "", formatPositional, formatNamed:
	default:
		return invalidParam("invalid_parameter_format", "parameter_format is POSITIONAL or NAMED")
	}
	t, err := d.cfg.Templates.Add(r.Context(), t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": t.ID, "status": t.Status, "category": t.Category})
	return nil
}

// deleteTemplate is DELETE /{version}/{waba_id}/message_templates?name=.
func (d *Door) deleteTemplate(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkWABA(r); err != nil {
		return err
	}
	if d.cfg.Templates == nil {
		return errNoTemplates
	}
	name := r.URL.Query().Get("name")
	if !validTemplateName(name) {
		return invalidParam("invalid_template_name", "name is 1-512 lowercase letters, digits and underscores")
	}
	found, err := d.cfg.Templates.Delete(r.Context(), name)
	if err != nil {
		return err
	}
	if !found {
		return noObject(name)
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

// renderTemplate is the text of a template message.
func (d *Door) renderTemplate(r *http.Request, use *templateUse) (string, error) {
	if use == nil || use.Name == "" {
		return "", invalidParam("missing_template", "a template message needs template.name")
	}
	missing := graphErr(http.StatusBadRequest, CodeTemplateMissing, "(#132001) Template name does not exist in the translation",
		"template "+use.Name+" does not exist in "+use.Language.Code, "template_not_found")
	if d.cfg.Templates == nil {
		return "", missing
	}
	t, found, err := d.cfg.Templates.Find(r.Context(), use.Name, use.Language.Code)
	switch {
	case err != nil:
		return "", err
	case !found:
		return "", missing
	}
	return t.render(use)
}
