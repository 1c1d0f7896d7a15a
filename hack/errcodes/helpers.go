package main

import (
	"go/ast"
)

// A helper is a function of a package that passes one of its string
// parameters on as the code of an error: webhook's invalid(code, format,
// args...), httpkit's WriteErrorBody(w, status, code, message). A literal
// given for that parameter is a code as much as one given to a
// constructor, and is rewritten the same way. A helper's message is the
// argument after its code.

// findHelpers returns the package's helpers by name, each as a
// constructor: the index of its code parameter and the kind of the error
// it makes. A helper may call another, so the search repeats until a pass
// finds no new one. Methods are left out: their calls name a value, not
// the function.
func findHelpers(files []*ast.File, inPkg bool) map[string]constructor {
	helpers := map[string]constructor{}
	for found := true; found; {
		found = false
		for _, f := range files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || fn.Body == nil {
					continue
				}
				if _, known := helpers[fn.Name.Name]; known {
					continue
				}
				if h, ok := helperOf(fn, inPkg, helpers); ok {
					helpers[fn.Name.Name], found = h, true
				}
			}
		}
	}
	return helpers
}

// helperOf reports whether fn passes one of its string parameters on as a
// code, and which.
func helperOf(fn *ast.FuncDecl, inPkg bool, helpers map[string]constructor) (constructor, bool) {
	params := stringParams(fn.Type.Params)
	var h constructor
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if found {
			return false
		}
		s := siteOf(n, inPkg, helpers)
		if s == nil {
			return true
		}
		if id, ok := s.codeExpr.(*ast.Ident); ok {
			if i, ok := params[id.Name]; ok {
				h, found = constructor{codeArg: i, kind: s.kind}, true
			}
		}
		return !found
	})
	return h, found
}

// stringParams maps the names of a parameter list's strings to their
// index among the arguments.
func stringParams(params *ast.FieldList) map[string]int {
	out := map[string]int{}
	i := 0
	for _, field := range params.List {
		typ, isIdent := field.Type.(*ast.Ident)
		if len(field.Names) == 0 {
			i++
			continue
		}
		for _, name := range field.Names {
			if isIdent && typ.Name == "string" {
				out[name.Name] = i
			}
			i++
		}
	}
	return out
}

// helperSite recognises a call of one of the package's helpers.
func helperSite(call *ast.CallExpr, helpers map[string]constructor) *site {
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return nil
	}
	h, ok := helpers[id.Name]
	if !ok || len(call.Args) <= h.codeArg {
		return nil
	}
	s := &site{kind: h.kind}
	if len(call.Args) > h.codeArg+1 {
		s.message = stringOf(call.Args[h.codeArg+1])
	}
	s.setCode(call.Args[h.codeArg])
	return s
}
