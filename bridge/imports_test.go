package bridge_test

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The import rules are the table "What may import what" of
// docs/development/architecture.md, read by the test itself, so the document cannot
// drift from what the code does: a change of a rule is a change of the
// table. The imports are read from the sources with go/parser, so that the
// quick tier starts no process (go list would); test files are not
// production imports and are left out.

const module = "github.com/msgbridge/msgbridge/"

// The table's rows name packages in backquotes, relative to bridge/
// (`sendqueue`), except the domain (`bridge`) and `contract`; what stands in
// parentheses explains a rule (or names what is never allowed) and is not
// part of it. cmd/bridge (the wiring) and wasim (the simulator) have rules
// of their own in forbidden.
var (
	tableRow    = regexp.MustCompile(`^\| (.+?) \| (.+) \|$`)
	parentheses = regexp.MustCompile(`\([^()]*\)`)
	quoted      = regexp.MustCompile("`([a-z/]+)`")
)

// importTable reads the table of docs/development/architecture.md: for each package,
// the packages of this module it may import.
func importTable(t *testing.T, doc string) map[string][]string {
	t.Helper()
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(text), "### What may import what\n")
	if !found {
		t.Fatalf("%s has no section \"What may import what\"", doc)
	}
	rules := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		row := tableRow.FindStringSubmatch(line)
		if row == nil || row[1] == "package" || strings.HasPrefix(row[1], "---") {
			continue
		}
		var allowed []string
		for _, m := range quoted.FindAllStringSubmatch(parentheses.ReplaceAllString(row[2], ""), -1) {
			allowed = append(allowed, modulePath(m[1]))
		}
		for _, m := range quoted.FindAllStringSubmatch(parentheses.ReplaceAllString(row[1], ""), -1) {
			rules[modulePath(m[1])] = allowed
		}
	}
	if len(rules) == 0 {
		t.Fatalf("%s: no rules read from its table", doc)
	}
	return rules
}

// modulePath turns a name of the table into a path relative to the module.
func modulePath(name string) string {
	if name == "bridge" || name == "contract" {
		return name
	}
	return "bridge/" + name
}

// onlyImporter names the packages that alone may import a library.
var onlyImporter = map[string][]string{
	"go.mau.fi/whatsmeow": {"bridge/whatsapp", "bridge/wasim"},
}

// TestImportRules fails on every import of a bridge package that
// docs/development/architecture.md does not allow, naming the edge and its file.
func TestImportRules(t *testing.T) {
	mayImport := importTable(t, "../docs/development/architecture.md")
	imports := productionImports(t, "..")
	var pkgs []string
	for pkg := range imports {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		for imp, file := range imports[pkg] {
			if why := forbidden(mayImport, pkg, imp); why != "" {
				t.Errorf("%s imports %s (%s): %s; allow it in docs/development/architecture.md's table, or remove it", pkg, imp, file, why)
			}
		}
	}
	for pkg := range mayImport {
		if _, ok := imports[pkg]; !ok && !under(pkg, []string{"bridge/cmd", "bridge/wasim"}) {
			t.Errorf("docs/development/architecture.md's table names %s, which has no production files: remove its row", pkg)
		}
	}
}

// forbidden says why pkg may not import imp, or "" when it may.
func forbidden(mayImport map[string][]string, pkg, imp string) string {
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

// processTier are the imports that make a test part of the process tier:
// it runs a program (the bridge binary, a generated client), starts the
// WhatsApp simulator or drives a browser.
var processTier = []string{"os/exec", module + "bridge/wasim", "github.com/chromedp/chromedp"}

// TestWiringTestsAreUnitTests: the tests of the wiring (cmd/bridge) stay
// unit tests, so its test binary stays small and make test-unit quick; a
// test that needs the bridge as a process goes to test/process, which
// builds the binary once for all of them.
func TestWiringTestsAreUnitTests(t *testing.T) {
	files, err := filepath.Glob("cmd/bridge/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Imports {
			imp, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if under(imp, processTier) {
				t.Errorf("bridge/%s imports %s: a process, simulator or browser test; move it to test/process (git mv, package process)", file, imp)
			}
		}
	}
}
