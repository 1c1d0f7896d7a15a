package cloudapi

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Templates keeps the message templates clients create through the door,
// in bridge.db. There is no review: a template is APPROVED as soon as it
// is stored, and sent as text with its parameters filled in.
type Templates struct {
	DB      *sql.DB
	Batcher *sqlite.Batcher // DB's one writer
	Now     func() time.Time
}

// Template is one stored template in Graph's shape.
type Template struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Language string `json:"language"`
	Category string `json:"category"`
	Status   string `json:"status"`
	// ParameterFormat is POSITIONAL ({{1}}) or NAMED ({{first_name}}, each
	// filled by the parameter of that parameter_name); POSITIONAL when a
	// client named none.
	ParameterFormat string         `json:"parameter_format"`
	Components      []tplComponent `json:"components"`
}

// Parameter formats of a template.
const (
	formatPositional = "POSITIONAL"
	formatNamed      = "NAMED"
)

// storedComponents is what the components column holds: the components
// and the parameter format, as one JSON object (rows stored before the
// format was kept hold the components' array alone, and are POSITIONAL).
type storedComponents struct {
	ParameterFormat string         `json:"parameter_format"`
	Components      []tplComponent `json:"components"`
}

type tplComponent struct {
	Type    string          `json:"type"`
	Format  string          `json:"format,omitempty"`
	Text    string          `json:"text,omitempty"`
	Buttons json.RawMessage `json:"buttons,omitempty"`
	Example json.RawMessage `json:"example,omitempty"`
}

// maxTemplateName is the longest template name Graph takes.
const maxTemplateName = 512

// templateNameChars are the characters of a template name. The length is
// checked apart: a pattern counting to 512 compiles to 512 copies of its
// class, which every start paid for at initialisation (360 KB, 1 ms).
var templateNameChars = regexp.MustCompile(`^[a-z0-9_]+$`)

// validTemplateName is Graph's rule for template names: 1-512 lower-case
// letters, digits and underscores.
func validTemplateName(name string) bool {
	return len(name) <= maxTemplateName && templateNameChars.MatchString(name)
}

// Add stores t (its id is made here); a name and language taken already is
// Graph's duplicate error.
func (s *Templates) Add(ctx context.Context, t Template) (Template, error) {
	t.ID, t.Status = newTemplateID(), "APPROVED"
	if t.ParameterFormat == "" {
		t.ParameterFormat = formatPositional
	}
	comps, _ := json.Marshal(storedComponents{t.ParameterFormat, t.Components}) // plain structs: cannot fail
	err := s.Batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cloud_templates (id, name, language, category, components, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, t.ID, t.Name, t.Language, t.Category, string(comps), s.now().UnixMilli())
		return err
	})
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return Template{}, invalidParam("template_exists",
				"a template named "+t.Name+" exists in "+t.Language+" already")
		}
		return Template{}, bridge.Internal(bridge.CodeStoreFailed, "the template could not be stored", err)
	}
	return t, nil
}

// TemplateQuery selects a page of templates.
type TemplateQuery struct {
	Name string // only this name; "" any
	// AfterName and AfterLanguage: the page starts after this template
	// (a cursor's position); "" from the first.
	AfterName, AfterLanguage string
	Limit                    int // at most this many; 0 every one
}

// List returns the templates that q selects, by name then language, and
// whether more follow.
func (s *Templates) List(ctx context.Context, q TemplateQuery) ([]Template, bool, error) {
	limit := -1
	if q.Limit > 0 {
		limit = q.Limit + 1 // one more tells whether a next page exists
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT id, name, language, category, components FROM cloud_templates
		WHERE (? = '' OR name = ?) AND (name > ? OR (name = ? AND language > ?))
		ORDER BY name, language LIMIT ?`, q.Name, q.Name, q.AfterName, q.AfterName, q.AfterLanguage, limit)
	if err != nil {
		return nil, false, bridge.Internal(bridge.CodeReadFailed, "the templates could not be read", err)
	}
	defer rows.Close()
	out := []Template{}
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, false, bridge.Internal(bridge.CodeReadFailed, "the templates could not be read", err)
	}
	if q.Limit > 0 && len(out) > q.Limit {
		return out[:q.Limit], true, nil
	}
	return out, false, nil
}

// Find returns the template name in language; ok false when none.
func (s *Templates) Find(ctx context.Context, name, language string) (Template, bool, error) {
	row := s.DB.QueryRowContext(ctx, `SELECT id, name, language, category, components FROM cloud_templates
		WHERE name = ? AND language = ?`, name, language)
	t, err := scanTemplate(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Template{}, false, nil
	}
	return t, err == nil, err
}

// Delete deletes every language of template name; false when none was kept.
func (s *Templates) Delete(ctx context.Context, name string) (bool, error) {
	var n int64
	err := s.Batcher.Do(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM cloud_templates WHERE name = ?`, name)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return false, bridge.Internal(bridge.CodeStoreFailed, "the template could not be deleted", err)
	}
	return n > 0, nil
}

func (s *Templates) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

type scanner interface{ Scan(dest ...any) error }

func scanTemplate(row scanner) (Template, error) {
	var (
		t     Template
		comps string
	)
	if err := row.Scan(&t.ID, &t.Name, &t.Language, &t.Category, &comps); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return t, err
		}
		return t, bridge.Internal(bridge.CodeReadFailed, "the templates could not be read", err)
	}
	t.Status, t.ParameterFormat = "APPROVED", formatPositional
	var err error
	if strings.HasPrefix(comps, "[") {
		err = json.Unmarshal([]byte(comps), &t.Components)
	} else {
		var stored storedComponents
		err = json.Unmarshal([]byte(comps), &stored)
		t.Components = stored.Components
		if stored.ParameterFormat != "" {
			t.ParameterFormat = stored.ParameterFormat
		}
	}
	if err != nil {
		return t, bridge.Internal(bridge.CodeReadFailed, "a stored template is damaged", err)
	}
	return t, nil
}

// newTemplateID is a Graph-like numeric id.
func newTemplateID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(1e15+binary.BigEndian.Uint64(b[:])%1e15, 10)
}

// templateUse is the template object of a template message.
type templateUse struct {
	Name     string `json:"name"`
	Language struct {
		Code string `json:"code"`
	} `json:"language"`
	Components []struct {
		Type       string     `json:"type"`
		Parameters []tplParam `json:"parameters"`
	} `json:"components"`
}

type tplParam struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// ParameterName names the placeholder of a NAMED template it fills.
	ParameterName string `json:"parameter_name"`
	Currency      *struct {
		FallbackValue string `json:"fallback_value"`
	} `json:"currency"`
	DateTime *struct {
		FallbackValue string `json:"fallback_value"`
	} `json:"date_time"`
}

// value is the text a parameter puts in its placeholder.
func (p tplParam) value() string {
	switch {
	case p.Currency != nil:
		return p.Currency.FallbackValue
	case p.DateTime != nil:
		return p.DateTime.FallbackValue
	}
	return p.Text
}

// placeholder is {{1}}, {{2}}... or a named {{name}}.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

// render fills t's header, body and footer texts with use's parameters
// (by position, or by name in a NAMED template) and joins them as one
// text.
func (t Template) render(use *templateUse) (string, error) {
	params := map[string][]tplParam{}
	for _, c := range use.Components {
		params[strings.ToLower(c.Type)] = c.Parameters
	}
	var parts []string
	for _, c := range t.Components {
		kind := strings.ToLower(c.Type)
		if c.Text == "" || (kind != "header" && kind != "body" && kind != "footer") {
			continue
		}
		text, err := fill(c.Text, params[kind], t.ParameterFormat == formatNamed)
		if err != nil {
			return "", err
		}
		parts = append(parts, text)
	}
	if len(parts) == 0 {
		return "", graphErr(http.StatusBadRequest, CodeTemplateParams, "(#132000) Number of parameters does not match the expected number of params",
			"the template has no text to send", "template_empty")
	}
	return strings.Join(parts, "\n\n"), nil
}

// errParams refuses parameters that do not fit a template's placeholders.
func errParams(details string) error {
	return graphErr(http.StatusBadRequest, CodeTemplateParams, "(#132000) Number of parameters does not match the expected number of params",
		details, "template_params")
}

// fill replaces the placeholders of text with params: {{n}} by the n-th
// parameter (a placeholder may repeat), or, named, {{name}} by the
// parameter whose parameter_name it is. Every placeholder needs a
// parameter and every parameter a placeholder, as Graph checks.
func fill(text string, params []tplParam, named bool) (string, error) {
	values := make(map[string]string, len(params))
	for i, p := range params {
		key := strconv.Itoa(i + 1)
		if named {
			key = p.ParameterName
			if key == "" {
				return "", errParams("a NAMED template's parameters each need parameter_name")
			}
		}
		values[key] = p.value()
	}
	used := map[string]bool{}
	var missing string
	out := placeholder.ReplaceAllStringFunc(text, func(ph string) string {
		key := placeholder.FindStringSubmatch(ph)[1]
		v, ok := values[key]
		if !ok {
			missing = key
			return ""
		}
		used[key] = true
		return v
	})
	switch {
	case missing != "":
		return "", errParams("no parameter fills the placeholder {{" + missing + "}}")
	case len(used) != len(values):
		return "", errParams("the template's placeholders and the parameters differ in number")
	}
	return out, nil
}
