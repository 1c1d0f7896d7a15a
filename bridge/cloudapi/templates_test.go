package cloudapi

import (
	"context"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Templates live in bridge.db: stored, listed, found by name and
// language, refused twice, deleted in every language.
func TestTemplatesStore(t *testing.T) {
	ctx := context.Background()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	s := &Templates{DB: db, Batcher: writer}
	body := []tplComponent{{Type: "BODY", Text: "Hi {{1}}"}}
	for _, lang := range []string{"en_US", "de"} {
		if _, err := s.Add(ctx, Template{Name: "hello", Language: lang, Category: "UTILITY", Components: body}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Add(ctx, Template{Name: "hello", Language: "de", Category: "UTILITY", Components: body}); fromBridge(err).BridgeCode != "template_exists" {
		t.Errorf("a second hello/de: %v", err)
	}
	list, _, err := s.List(ctx, TemplateQuery{})
	if err != nil || len(list) != 2 || list[0].Language != "de" || list[1].Status != "APPROVED" || list[1].Components[0].Text != "Hi {{1}}" {
		t.Fatalf("list %+v %v", list, err)
	}
	if tpl, ok, err := s.Find(ctx, "hello", "en_US"); !ok || err != nil || tpl.ID != list[1].ID {
		t.Errorf("find %+v %v %v", tpl, ok, err)
	}
	if _, ok, err := s.Find(ctx, "hello", "fr"); ok || err != nil {
		t.Errorf("find fr: %v %v", ok, err)
	}
	if found, err := s.Delete(ctx, "hello"); !found || err != nil {
		t.Errorf("delete: %v %v", found, err)
	}
	if list, _, _ := s.List(ctx, TemplateQuery{}); len(list) != 0 {
		t.Errorf("after delete %+v", list)
	}
}

// FuzzTemplateFill: a template's text and a send's parameters are
// untrusted; filling never panics, and a text it fills holds the value in
// the place of every placeholder (so it grows by at most the value for
// each).
func FuzzTemplateFill(f *testing.F) {
	f.Add("Hi {{1}}, again {{1}}", "", "Ann", false)
	f.Add("Hi {{first_name}}", "first_name", "Ann", true)
	f.Add("{{ x }}{{", "x", "{{x}}", true)
	f.Fuzz(func(t *testing.T, text, name, value string, named bool) {
		out, err := fill(text, []tplParam{{Type: "text", Text: value, ParameterName: name}}, named)
		if err != nil {
			return
		}
		n := len(placeholder.FindAllString(text, -1))
		if n == 0 || !strings.Contains(out, value) || len(out) > len(text)+n*len(value) {
			t.Errorf("%q filled with %q is %q", text, value, out)
		}
	})
}
