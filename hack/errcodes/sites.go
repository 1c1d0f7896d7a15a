package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A site is one place in the bridge's production code that names an error
// code: a call of one of the error constructors or an Error literal.
type site struct {
	file    string
	pos     token.Position
	code    string // the code, when it is a string literal
	literal *ast.BasicLit
	// codeExpr is the code as written: a literal, a constant, a variable
	// (a helper's parameter).
	codeExpr ast.Expr
	kind     string // the Kind constant's name (KindInvalid), when it is one
	message  string // the message or format, when it is a string literal
	inPkg    bool   // the site is in package bridge itself (no "bridge." prefix)
}

// A constructor makes an error of a code: the index of its code argument
// and the kind it implies ("" when the kind is its first argument).
type constructor struct {
	codeArg int
	kind    string
}

// constructors are the error constructors of package bridge.
var constructors = map[string]constructor{
	"Invalid":  {0, "KindInvalid"},
	"Internal": {0, "KindInternal"},
	"Errorf":   {1, ""},
}

// scan returns every site under dir (the bridge/ directory), test files and
// the simulator left out: tests pin the wire's strings on purpose. It reads
// a package's files together, so that a helper of the package that passes
// its parameter on as a code is known at every call.
func scan(dir string) ([]site, error) {
	packages := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "wasim" || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		packages[filepath.Dir(path)] = append(packages[filepath.Dir(path)], path)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var sites []site
	for _, paths := range packages {
		found, err := scanPackage(paths)
		if err != nil {
			return nil, err
		}
		sites = append(sites, found...)
	}
	sort.SliceStable(sites, func(i, j int) bool {
		a, b := sites[i].pos, sites[j].pos
		return a.Filename < b.Filename || a.Filename == b.Filename && a.Offset < b.Offset
	})
	return sites, nil
}

// scanPackage returns the sites of one package's files.
func scanPackage(paths []string) ([]site, error) {
	fset := token.NewFileSet()
	files := make([]*ast.File, len(paths))
	for i, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files[i] = f
	}
	inPkg := files[0].Name.Name == "bridge"
	helpers := findHelpers(files, inPkg)
	var sites []site
	for i, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if s := siteOf(n, inPkg, helpers); s != nil {
				s.file, s.inPkg = paths[i], inPkg
				s.pos = fset.Position(s.literalOrCall(n))
				sites = append(sites, *s)
			}
			return true
		})
	}
	return sites, nil
}

// siteOf is n as a site: a constructor's call, a helper's call or an
// error literal; nil when it is none.
func siteOf(n ast.Node, inPkg bool, helpers map[string]constructor) *site {
	switch n := n.(type) {
	case *ast.CallExpr:
		if s := callSite(n, inPkg); s != nil {
			return s
		}
		return helperSite(n, helpers)
	case *ast.CompositeLit:
		return literalSite(n, inPkg)
	}
	return nil
}

// literalOrCall is where a site is reported: its code's literal, or the
// call when the code is computed.
func (s *site) literalOrCall(n ast.Node) token.Pos {
	if s.literal != nil {
		return s.literal.Pos()
	}
	return n.Pos()
}

// callSite recognises bridge.Invalid(code, …), bridge.Internal(code, …) and
// bridge.Errorf(kind, code, …).
func callSite(call *ast.CallExpr, inPkg bool) *site {
	name, ok := bridgeName(call.Fun, inPkg)
	if !ok {
		return nil
	}
	c, ok := constructors[name]
	if !ok || len(call.Args) <= c.codeArg+1 {
		return nil
	}
	s := &site{kind: c.kind, message: stringOf(call.Args[c.codeArg+1])}
	if c.kind == "" {
		s.kind = kindName(call.Args[0], inPkg)
	}
	s.setCode(call.Args[c.codeArg])
	return s
}

// literalSite recognises &bridge.Error{Kind: …, Code: …, Message: …}, and
// the error shape's own ErrorDetail{Code: …, Message: …} (package httpapi/internal/httpkit),
// which an answer without a kind (405, 416) writes directly.
func literalSite(lit *ast.CompositeLit, inPkg bool) *site {
	name, ok := bridgeName(lit.Type, inPkg)
	if detail, local := lit.Type.(*ast.Ident); local && detail.Name == wireDetail {
		name, ok = wireDetail, true
	}
	if !ok || name != "Error" && name != wireDetail {
		return nil
	}
	s := &site{}
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		switch key, _ := kv.Key.(*ast.Ident); {
		case key == nil:
		case key.Name == "Kind":
			s.kind = kindName(kv.Value, inPkg)
		case key.Name == "Code":
			s.setCode(kv.Value)
		case key.Name == "Message":
			s.message = stringOf(kv.Value)
		}
	}
	return s
}

// wireDetail is the type of the error shape's {code, message} in package
// httpapi/internal/httpkit.
const wireDetail = "ErrorDetail"

func (s *site) setCode(e ast.Expr) {
	s.codeExpr = e
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s.literal, s.code = lit, stringOf(lit)
	}
}

// bridgeName is the name e refers to in package bridge: bridge.X outside
// it, X inside.
func bridgeName(e ast.Expr, inPkg bool) (string, bool) {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		pkg, ok := e.X.(*ast.Ident)
		return e.Sel.Name, ok && pkg.Name == "bridge" && !inPkg
	case *ast.Ident:
		return e.Name, inPkg
	}
	return "", false
}

func kindName(e ast.Expr, inPkg bool) string {
	if name, ok := bridgeName(e, inPkg); ok && strings.HasPrefix(name, "Kind") {
		return name
	}
	return ""
}

func stringOf(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}
