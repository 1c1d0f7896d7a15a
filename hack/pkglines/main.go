// Command pkglines prints, for each Go package under a directory (bridge/
// by default), its production files and lines (test files left out) and
// the field count of each struct named Deps: the figures of
// docs/design/20261128-httpapi-by-audience.md.
//
//	go run ./hack/pkglines [dir]
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// pkg is one package's figures.
type pkg struct {
	files, lines int
	deps         []int // the field count of each struct named Deps
}

func main() {
	root := "bridge"
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	pkgs, err := measure(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var names []string
	for name := range pkgs {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Println("| package | files | lines | Deps fields |\n|---|---:|---:|---|")
	total := 0
	for _, name := range names {
		p := pkgs[name]
		total += p.lines
		deps := strings.Trim(fmt.Sprint(p.deps), "[]")
		fmt.Printf("| `%s` | %d | %d | %s |\n", name, p.files, p.lines, deps)
	}
	fmt.Printf("| all | | %d | |\n", total)
}

// measure reads every non-test Go file under root.
func measure(root string) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error { //nolint:gosec // the tree it was pointed at
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path) //nolint:gosec // a file of that tree
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkg{}
			pkgs[dir] = p
		}
		p.files++
		p.lines += strings.Count(string(src), "\n")
		p.deps = append(p.deps, depsFields(f)...)
		return nil
	})
	return pkgs, err
}

// depsFields counts the named fields (an embedded one counts one) of each
// struct type named Deps in f.
func depsFields(f *ast.File) []int {
	var counts []int
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Deps" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		count := 0
		for _, field := range st.Fields.List {
			count += max(len(field.Names), 1)
		}
		counts = append(counts, count)
		return false
	})
	return counts
}
