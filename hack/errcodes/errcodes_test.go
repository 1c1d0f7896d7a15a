package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every error code in the bridge's production code is a named constant of
// bridge/codes.go: a literal at a call site is a code the table does not
// know (and a typo nothing catches).
func TestNoLiteralCodes(t *testing.T) {
	sites, err := scan(filepath.Join("..", "..", "bridge"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) < 100 {
		t.Fatalf("found only %d error sites; the scan misses the constructors", len(sites))
	}
	for _, s := range literalSites(sites) {
		t.Errorf("%s: error code %q written as a literal; run go run ./hack/errcodes", s.pos, s.code)
	}
}

// The codemod adds a row for a new code, rewrites the literal in and out of
// package bridge, keeps the rows it finds, and a second run changes nothing.
func TestRewriteAddsAndKeeps(t *testing.T) {
	root := t.TempDir()
	write(t, root, "bridge/codes.go", "package bridge\n\nconst (\n\tCodeOld = \"old\"\n)\n\n"+
		"var Codes = []CodeInfo{\n\t{CodeOld, KindConflict, \"written by hand\"},\n}\n")
	write(t, root, "bridge/x.go", "package bridge\n\nvar errX = Invalid(\"bad_json\", \"the body is %d bytes\", 3)\n")
	write(t, root, "bridge/pkg/y.go", "package pkg\n\nimport \"example/bridge\"\n\n"+
		"var errY = &bridge.Error{Kind: bridge.KindNotFound, Code: \"old\", Message: \"gone\"}\n"+
		"var errZ = bridge.Errorf(bridge.KindTimeout, \"slow_qr\", \"late\")\n")
	for range 2 {
		if err := run(root, false); err != nil {
			t.Fatal(err)
		}
	}
	table := read(t, root, "bridge/codes.go")
	for _, want := range []string{
		`{CodeOld, KindConflict, "written by hand"}`,
		`{CodeBadJSON, KindInvalid, "the body is N bytes"}`,
		`{CodeSlowQR, KindTimeout, "late"}`,
		`CodeBadJSON = "bad_json"`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %s:\n%s", want, table)
		}
	}
	if x := read(t, root, "bridge/x.go"); !strings.Contains(x, "Invalid(CodeBadJSON,") {
		t.Errorf("x.go not rewritten:\n%s", x)
	}
	y := read(t, root, "bridge/pkg/y.go")
	if !strings.Contains(y, "Code: bridge.CodeOld,") || !strings.Contains(y, "bridge.Errorf(bridge.KindTimeout, bridge.CodeSlowQR,") {
		t.Errorf("y.go not rewritten:\n%s", y)
	}
	if err := run(root, true); err != nil {
		t.Errorf("the check still finds literals after the rewrite: %v", err)
	}
}

// A package-local helper that passes its parameter on as a code (webhook's
// invalid, httpapi's writeErrorBody) is a constructor too: its literals get
// rows and constants, through a helper that calls a helper as well, and
// the check sees them.
func TestHelpersTakeCodes(t *testing.T) {
	root := t.TempDir()
	write(t, root, "bridge/codes.go", "package bridge\n\nconst (\n\tCodeOld = \"old\"\n)\n\n"+
		"var Codes = []CodeInfo{\n\t{CodeOld, KindConflict, \"written by hand\"},\n}\n")
	write(t, root, "bridge/pkg/helpers.go", "package pkg\n\nimport \"example/bridge\"\n\n"+
		"func invalid(code, format string, args ...any) *bridge.Error {\n\treturn bridge.Errorf(bridge.KindInvalid, code, format, args...)\n}\n\n"+
		"func refuse(status int, code string) error { return invalid(code, \"refused\") }\n\n"+
		"type ErrorDetail struct{ Code, Message string }\n\n"+
		"func writeDetail(status int, code, message string) any { return ErrorDetail{Code: code, Message: message} }\n")
	write(t, root, "bridge/pkg/calls.go", "package pkg\n\nimport \"example/bridge\"\n\n"+
		"var errT = invalid(\"bad_target\", \"target %s is wrong\", \"x\")\n"+
		"var errR = refuse(409, \"no_way\")\n"+
		"var errO = invalid(bridge.CodeOld, \"old\")\n"+
		"var detail = writeDetail(405, \"wrong_method\", \"not this method\")\n")
	if err := run(root, true); err == nil || !strings.Contains(err.Error(), "3 error codes") {
		t.Fatalf("the check before the rewrite: %v, want the three literals given to helpers", err)
	}
	if err := run(root, false); err != nil {
		t.Fatal(err)
	}
	table := read(t, root, "bridge/codes.go")
	for _, want := range []string{
		`{CodeBadTarget, KindInvalid, "target … is wrong"}`,
		`{CodeNoWay, KindInvalid, "(no meaning written yet)"}`,
		`{CodeWrongMethod, KindInternal, "not this method"}`,
		`{CodeOld, KindConflict, "written by hand"}`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %s:\n%s", want, table)
		}
	}
	calls := read(t, root, "bridge/pkg/calls.go")
	for _, want := range []string{`invalid(bridge.CodeBadTarget, "target %s is wrong"`, `refuse(409, bridge.CodeNoWay)`,
		`writeDetail(405, bridge.CodeWrongMethod,`} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls.go lacks %s:\n%s", want, calls)
		}
	}
	if err := run(root, true); err != nil {
		t.Errorf("the check still finds literals after the rewrite: %v", err)
	}
}

func write(t *testing.T, root, name, content string) {
	t.Helper()
	path := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
