package cloudapi

import (
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
)

// errNoTemplates answers the template endpoints of a door without a store.
var errNoTemplates = bridge.Errorf(bridge.KindUnavailable, bridge.CodeTemplatesUnavailable, "this bridge keeps no templates")

// listTemplates is GET /{version}/{waba_id}/message_templates: every
// template, in one page (Graph's paging with no next).
func (d *Door) listTemplates(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkWABA(r); err != nil {
		return err
	}
	list := []Template{}
	if d.cfg.Templates != nil {
		var err error
		if list, err = d.cfg.Templates.List(r.Context()); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list, "paging": map[string]any{"cursors": map[string]string{}}})
	return nil
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
	if err := d.authorize(r); err != nil {
		return "", err
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
