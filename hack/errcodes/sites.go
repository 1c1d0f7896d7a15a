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
	kind    string // the Kind constant's name (KindInvalid), when it is one
	message string // the message or format, when it is a string literal
	inPkg   bool   // the site is in package bridge itself (no "bridge." prefix)
}

// constructors are the error constructors of package bridge, with the
// index of their code argument and the kind they imply ("" when the kind is
// their first argument).
var constructors = map[string]struct {
	codeArg int
	kind    string
}{
	"Invalid":  {0, "KindInvalid"},
	"Internal": {0, "KindInternal"},
	"Errorf":   {1, ""},
}

// scan returns every site under dir (the bridge/ directory), test files and
// the simulator left out: tests pin the wire's strings on purpose.
func scan(dir string) ([]site, error) {
	var sites []site
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "wasim" || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		found, err := scanFile(path)
		sites = append(sites, found...)
		return err
	})
	sort.SliceStable(sites, func(i, j int) bool {
		a, b := sites[i].pos, sites[j].pos
		return a.Filename < b.Filename || a.Filename == b.Filename && a.Offset < b.Offset
	})
	return sites, err
}

func scanFile(path string) ([]site, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	inPkg := f.Name.Name == "bridge"
	var sites []site
	ast.Inspect(f, func(n ast.Node) bool {
		var s *site
		switch n := n.(type) {
		case *ast.CallExpr:
			s = callSite(n, inPkg)
		case *ast.CompositeLit:
			s = literalSite(n, inPkg)
		}
		if s != nil {
			s.file, s.inPkg = path, inPkg
			s.pos = fset.Position(s.literalOrCall(n))
			sites = append(sites, *s)
		}
		return true
	})
	return sites, nil
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

// literalSite recognises &bridge.Error{Kind: …, Code: …, Message: …}.
func literalSite(lit *ast.CompositeLit, inPkg bool) *site {
	if name, ok := bridgeName(lit.Type, inPkg); !ok || name != "Error" {
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

func (s *site) setCode(e ast.Expr) {
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
