package bridge_test

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The import rules of docs/architecture.md ("What may import what"), as
// the test that keeps the two in step: a change of a rule changes both.
// The imports are read from the sources with go/parser, so that the quick
// tier starts no process (go list would); test files are not production
// imports and are left out.

const module = "github.com/msgbridge/msgbridge/"

// mayImport lists, for each package of the bridge (a path relative to the
// module), the packages of this module it may import; "cmd/bridge" is the
// wiring and may import everything.
var mayImport = map[string][]string{
	"bridge":                   {"contract"},
	"contract":                 {},
	"bridge/sqlite":            {"bridge", "contract"},
	"bridge/datadir":           {"bridge", "contract"},
	"bridge/logging":           {"bridge", "contract"},
	"bridge/metrics":           {"bridge", "contract"},
	"bridge/audit":             {"bridge", "contract", "bridge/sqlite"},
	"bridge/durable":           {"bridge/sqlite"},
	"bridge/media":             {"bridge", "contract", "bridge/sqlite", "bridge/durable"},
	"bridge/settings":          {"bridge", "contract", "bridge/logging"},
	"bridge/whatsapp":          {"bridge", "contract", "bridge/sqlite"},
	"bridge/sendqueue":         {"bridge", "contract", "bridge/sqlite", "bridge/durable"},
	"bridge/webhook":           {"bridge", "bridge/sqlite", "bridge/durable"},
	"bridge/inbox":             {"bridge", "bridge/sqlite", "bridge/durable", "bridge/webhook"},
	"bridge/incoming":          {"bridge", "bridge/sqlite"},
	"bridge/httpapi":           {"bridge", "contract", "bridge/audit", "bridge/logging", "bridge/sendqueue", "bridge/inbox", "bridge/webhook", "bridge/httpapi/openapi"},
	"bridge/httpapi/dashboard": {"bridge", "contract", "bridge/audit", "bridge/httpapi"},
	"bridge/httpapi/openapi":   {},
}

// onlyImporter names the packages that alone may import a library.
var onlyImporter = map[string][]string{
	"go.mau.fi/whatsmeow": {"bridge/whatsapp", "bridge/wasim"},
}

// TestImportRules fails on every import of a bridge package that
// docs/architecture.md does not allow, naming the edge and its file.
func TestImportRules(t *testing.T) {
	imports := productionImports(t, "..")
	var pkgs []string
	for pkg := range imports {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		for imp, file := range imports[pkg] {
			if why := forbidden(pkg, imp); why != "" {
				t.Errorf("%s imports %s (%s): %s; allow it in docs/architecture.md and here, or remove it", pkg, imp, file, why)
			}
		}
	}
	for pkg := range mayImport {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("the rules name %s, which has no production files: remove its rule", pkg)
		}
	}
}

// forbidden says why pkg may not import imp, or "" when it may.
func forbidden(pkg, imp string) string {
	for lib, only := range onlyImporter {
		if (imp == lib || strings.HasPrefix(imp, lib+"/")) && !under(pkg, only) {
			return "only " + strings.Join(only, ", ") + " may import " + lib
		}
	}
	local, ok := strings.CutPrefix(imp, module)
	if !ok {
		return "" // the standard library or a library of its own
	}
	switch {
	case under(local, []string{"bridge/wasim"}) && !under(pkg, []string{"bridge/wasim"}):
		return "the simulator is imported only by tests and -tags wasim builds"
	case under(pkg, []string{"bridge/cmd", "bridge/wasim"}):
		return "" // the wiring; the simulator
	}
	allowed, ruled := mayImport[pkg]
	if !ruled {
		return "the package has no rule"
	}
	for _, a := range allowed {
		if local == a {
			return ""
		}
	}
	return "not in its rule"
}

// under reports whether pkg is one of roots or inside one.
func under(pkg string, roots []string) bool {
	for _, r := range roots {
		if pkg == r || strings.HasPrefix(pkg, r+"/") {
			return true
		}
	}
	return false
}

// productionImports reads the non-test Go files under root/bridge and
// root/contract; it maps each package (relative to the module) to its
// imports, each with a file that has it. A file built only with the wasim
// tag is the simulator's build and left out.
func productionImports(t *testing.T, root string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range []string{"bridge", "contract"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if wasimOnly(f) {
				return nil
			}
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			pkg := path.Clean(filepath.ToSlash(rel))
			if out[pkg] == nil {
				out[pkg] = map[string]string{}
			}
			for _, s := range f.Imports {
				imp, err := strconv.Unquote(s.Path.Value)
				if err != nil {
					return err
				}
				out[pkg][imp] = filepath.ToSlash(p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// wasimOnly reports whether f is built only with the wasim tag.
func wasimOnly(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			expr, err := constraint.Parse(c.Text)
			if err == nil && !expr.Eval(func(tag string) bool { return tag != "wasim" }) {
				return true
			}
		}
	}
	return false
}
