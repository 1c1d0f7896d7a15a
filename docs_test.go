package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/settings"
	"github.com/msgbridge/msgbridge/internal/docgen"
)

// The documents are the README, every page of docs/, and the READMEs that
// live beside their code (the simulator's, the chart's).
func documents(t *testing.T) []string {
	t.Helper()
	docs := []string{"README.md", "bridge/wasim/README.md", "charts/msgbridge/README.md"}
	err := filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// markdownLink is a link or an image of Markdown: [text](target) or
// ![alt](target).
var markdownLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// inlineCode is a code span, whose brackets are no link.
var inlineCode = regexp.MustCompile("`[^`\n]*`")

// page is a Markdown document split into its prose (code blocks blanked,
// so that a link or heading inside an example is not taken for one) and its
// fenced code blocks.
type page struct {
	prose  string
	blocks []codeBlock
}

type codeBlock struct {
	lang string
	line int // of the opening fence
	text string
}

func readPage(t *testing.T, path string) page {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p page
	var prose strings.Builder
	var block *codeBlock
	for i, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case block == nil && strings.HasPrefix(trimmed, "```"):
			block = &codeBlock{lang: strings.TrimPrefix(trimmed, "```"), line: i + 1}
			prose.WriteString("\n")
		case block != nil && strings.HasPrefix(trimmed, "```"):
			p.blocks = append(p.blocks, *block)
			block = nil
			prose.WriteString("\n")
		case block != nil:
			block.text += line + "\n"
			prose.WriteString("\n")
		default:
			prose.WriteString(line + "\n")
		}
	}
	if block != nil {
		t.Errorf("%s: the code block of line %d is never closed", path, block.line)
	}
	p.prose = prose.String()
	return p
}

var (
	heading      = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	notSlugChars = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// anchors are the fragments GitHub gives a page's headings: lower case,
// punctuation dropped, spaces made dashes, repeats numbered.
func anchors(p page) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(p.prose, -1) {
		slug := strings.ReplaceAll(notSlugChars.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		candidate := slug
		for n := 1; out[candidate]; n++ {
			candidate = slug + "-" + strconv.Itoa(n)
		}
		out[candidate] = true
	}
	return out
}

// TestDocsLinksResolve: every relative link and image of the documents
// names a file or folder of the repository and, with a #fragment, a heading
// of that page; no document points outside the repository (a moved folder
// left the README's screenshots broken once, and a moved section its
// anchors).
func TestDocsLinksResolve(t *testing.T) {
	pages := map[string]page{}
	for _, doc := range documents(t) {
		pages[doc] = readPage(t, doc)
	}
	for doc, p := range pages {
		for _, m := range markdownLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(p.prose, ""), -1) {
			target, fragment, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := doc
			if target != "" {
				path = filepath.Clean(filepath.Join(filepath.Dir(doc), target))
				if strings.HasPrefix(path, "..") {
					t.Errorf("%s links to %s, outside the repository", doc, m[1])
					continue
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", doc, m[1])
					continue
				}
			}
			if fragment == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			linked, ok := pages[path]
			if !ok {
				linked = readPage(t, path)
			}
			if !anchors(linked)[fragment] {
				t.Errorf("%s links to %s, but %s has no heading #%s", doc, m[1], path, fragment)
			}
		}
	}
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`DASHBOARD_SCREENSHOTS="\$\(CURDIR\)/([^"]+)"`).FindAllStringSubmatch(string(makefile), -1) {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("make screenshots writes to %s, which does not exist", m[1])
		}
	}
}

// wellKnown are variables every shell has; a page may use them unset.
var wellKnown = []string{"HOME", "PATH", "USER", "PWD", "SHELL", "TMPDIR"}

var (
	assignment = regexp.MustCompile(`(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=`)
	loopOrRead = regexp.MustCompile(`\b(?:for|read(?:\s+-r)?)\s+([A-Za-z_][A-Za-z0-9_]*)`)
	sourced    = regexp.MustCompile(`(?:^|\s)(?:source|\.)\s+\S*dev-credentials\.env`)
	reference  = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
)

// shellBlock reports whether a fenced block is shell a reader runs.
func shellBlock(lang string) bool {
	return slices.Contains([]string{"sh", "bash", "shell", "console"}, lang)
}

// TestDocsCommandVariables: every $VARIABLE a shell block of a document
// uses is set earlier in that block or in an earlier block of the page
// (an assignment, a loop, a read, or sourcing the development credentials
// that make run and make demo write), or is one every shell has. A reader
// who pastes the blocks in order has every value (the README's actions
// once used $KEY, $BRIDGE, $NOTE and $T that nothing set).
func TestDocsCommandVariables(t *testing.T) {
	credentials := devCredentialNames(t)
	for _, doc := range documents(t) {
		set := map[string]bool{}
		for _, v := range wellKnown {
			set[v] = true
		}
		for _, b := range readPage(t, doc).blocks {
			if !shellBlock(b.lang) {
				continue
			}
			for i, line := range strings.Split(b.text, "\n") {
				code := unquotedCode(line)
				for _, m := range assignment.FindAllStringSubmatch(code, -1) {
					set[m[1]] = true
				}
				for _, m := range loopOrRead.FindAllStringSubmatch(code, -1) {
					set[m[1]] = true
				}
				if sourced.MatchString(code) {
					for _, name := range credentials {
						set[name] = true
					}
				}
				for _, m := range reference.FindAllStringSubmatch(code, -1) {
					if !set[m[1]] {
						t.Errorf("%s:%d uses $%s, which neither the block nor the page sets before", doc, b.line+1+i, m[1])
						set[m[1]] = true // one report per variable and page
					}
				}
			}
		}
	}
}

// unquotedCode is a shell line without its comment and without what single
// quotes hold, where a $ is literal.
func unquotedCode(line string) string {
	var out strings.Builder
	single, double := false, false
	for i, r := range line {
		switch {
		case r == '\'' && !double:
			single = !single
			continue
		case r == '"' && !single:
			double = !double
		case r == '#' && !single && !double && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return out.String()
		}
		if !single {
			out.WriteRune(r)
		}
	}
	return out.String()
}

// devCredentialNames reads the names make run writes to
// dev-credentials.env, so that a page sourcing it sets exactly those.
func devCredentialNames(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("hack/run-bridge.sh")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	line := regexp.MustCompile(`^([A-Z_]+)=\$\(random_hex`)
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m := line.FindStringSubmatch(s.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatal("hack/run-bridge.sh writes no credentials this test recognises")
	}
	return names
}

// TestDocsLayoutNamesEveryPackage: every Go package under bridge/,
// controllers/, api/ and contract/ has its row on the layout page (the
// README's table once missed 7 of the bridge's 20 packages).
func TestDocsLayoutNamesEveryPackage(t *testing.T) {
	layout, err := os.ReadFile("docs/development/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"bridge", "controllers", "api", "contract"} {
		for _, dir := range goPackages(t, root) {
			if !strings.Contains(string(layout), "`"+dir+"/`") {
				t.Errorf("docs/development/layout.md has no row for the package %s/", dir)
			}
		}
	}
}

// goPackages lists the folders under root that hold Go files other than
// tests, testdata excluded.
func goPackages(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			if dir := filepath.ToSlash(filepath.Dir(path)); !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestGeneratedDocsAreCurrent: the resource reference is what the CRD
// renders and the settings reference what bridge/settings' table renders;
// after a change of either, `go run ./hack/docgen` (make docs) rewrites them.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	crd, err := os.ReadFile(docgen.CRDPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := docgen.ResourceReference(crd)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(docgen.ResourcePage); err != nil || string(got) != want {
		t.Errorf("%s is not what %s renders (%v): run go run ./hack/docgen", docgen.ResourcePage, docgen.CRDPath, err)
	}
	page, err := os.ReadFile(docgen.SettingsPage)
	if err != nil {
		t.Fatal(err)
	}
	want, err = docgen.WithSettingsTable(string(page))
	if err != nil {
		t.Fatal(err)
	}
	if string(page) != want {
		t.Errorf("%s's settings table is not what bridge/settings renders: run go run ./hack/docgen", docgen.SettingsPage)
	}
}

// TestDocsSettingsEachExplained: below the generated table, every setting
// has its paragraph (the table gives one line; ranges, interactions and
// links are in the paragraph).
func TestDocsSettingsEachExplained(t *testing.T) {
	page, err := os.ReadFile(docgen.SettingsPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range settings.Reference() {
		if !strings.Contains(string(page), "- **`"+d.Env+"`**: ") {
			t.Errorf("%s explains no setting %s: add its paragraph under Each setting", docgen.SettingsPage, d.Env)
		}
	}
}

var (
	goTestCommand = regexp.MustCompile("`(?:[A-Z_]+=\\S+ )*go test ([^`]+)`")
	packagePath   = regexp.MustCompile(`(?:^|\s)(\./[^\s']*)`)
	benchOrRun    = regexp.MustCompile(`-(bench|run)[= ]'?([^'\s]+)'?`)
)

// TestDocsBenchmarkCommandsRun: every `go test` command of the benchmarks
// page names packages that exist and, with -bench or -run, a benchmark or
// test of that package the pattern selects (the README once ran
// ./bridge/admin/ and ./bridge/store, neither of which existed).
func TestDocsBenchmarkCommandsRun(t *testing.T) {
	text, err := os.ReadFile("docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range goTestCommand.FindAllStringSubmatch(string(text), -1) {
		args := strings.ReplaceAll(m[1], `\|`, "|")
		pkgs := packagePath.FindAllStringSubmatch(args, -1)
		if len(pkgs) == 0 {
			t.Errorf("benchmarks.md: %q names no package", m[0])
		}
		for _, p := range pkgs {
			dir := strings.TrimSuffix(strings.TrimPrefix(p[1], "./"), "/")
			funcs := testFunctions(t, dir)
			if funcs == nil {
				t.Errorf("benchmarks.md: %q names %s, which has no tests", m[0], p[1])
				continue
			}
			for _, sel := range benchOrRun.FindAllStringSubmatch(args, -1) {
				if sel[2] == "NONE" || sel[2] == "^$" || sel[2] == "XXX" {
					continue
				}
				if !selectsOne(sel[1], sel[2], funcs) {
					t.Errorf("benchmarks.md: %q: -%s %s selects nothing in %s", m[0], sel[1], sel[2], p[1])
				}
			}
		}
	}
}

// testFunctions are the names of the Test and Benchmark functions of a
// package folder's test files, nil when there are none.
func testFunctions(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	var names []string
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark)\w+)\(`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// selectsOne reports whether go test's pattern (its first level, before a
// slash) matches a function of the kind the flag selects.
func selectsOne(flag, pattern string, funcs []string) bool {
	top, _, _ := strings.Cut(pattern, "/")
	re, err := regexp.Compile(top)
	if err != nil {
		return false
	}
	prefix := map[string]string{"bench": "Benchmark", "run": "Test"}[flag]
	for _, f := range funcs {
		if strings.HasPrefix(f, prefix) && re.MatchString(f) {
			return true
		}
	}
	return false
}
