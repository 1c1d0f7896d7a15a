// Command lazyproto makes the protocol buffer files under a folder register
// at their first use instead of at program start.
//
// protoc-gen-go's files register their descriptors from an init function:
// every process that links whatsmeow builds the descriptors of some fifty
// files (its own and those they import) before main runs, the largest part
// of the bridge's start-up work, whether or not a message is ever decoded.
// lazyproto rewrites each generated file so that its registration runs once,
// from the first method that needs it:
//
//   - the file's init function is removed, and its message and enum tables
//     are made by the registration;
//   - file_X_proto_init runs the registration through a sync.Once, after
//     registering the files it imports from sibling packages (the order
//     protoc-gen-go's init functions had);
//   - every function that reads the file's message or enum table, or its
//     raw descriptor (ProtoReflect, Reset, Descriptor, Type, ...), first
//     calls file_X_proto_init;
//   - each package exports XXX_RegisterProtoFiles, which its importers call.
//
// Marshalling, unmarshalling, String and every reflection go through
// ProtoReflect, so a message is never used before its file is registered.
// Nothing looks a descriptor up by name in the global registry before
// reaching the message's own methods (whatsmeow decodes into concrete types).
//
//	go run ./hack/lazyproto third_party/whatsmeow/proto
package main

import (
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: lazyproto FOLDER")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "lazyproto:", err)
		os.Exit(1)
	}
}

// run rewrites every generated file under folder.
func run(folder string) error {
	root, err := os.OpenRoot(folder)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".pb.go") {
			return err
		}
		src, err := root.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := rewrite(string(src))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return root.WriteFile(path, []byte(out), 0o644)
	})
}

var (
	// eagerInit is protoc-gen-go's init function of a file.
	eagerInit = regexp.MustCompile(`(?m)^func init\(\) \{ (file_\w+_proto)_init\(\) \}\n`)
	// eagerTable is the file's message or enum table, made at start-up.
	eagerTable = regexp.MustCompile(`(?m)^var (file_\w+_proto_(?:enum|msg)Types) = (make\(\[\]protoimpl\.\w+, \d+\))$`)
	// protoImport is an import of a sibling proto package.
	protoImport = regexp.MustCompile(`(?m)^\t(\w+) "go\.mau\.fi/whatsmeow/proto/\w+"$`)
)

// rewrite is src with its registration made lazy (see the package comment).
func rewrite(src string) (string, error) {
	m := eagerInit.FindStringSubmatch(src)
	if m == nil {
		return "", fmt.Errorf("no init function of the form protoc-gen-go writes")
	}
	file := m[1] // file_X_proto
	src = strings.Replace(src, m[0], "", 1)

	// The tables are made by the registration too: every reader of them
	// registers the file first.
	var tables []string
	for _, t := range eagerTable.FindAllStringSubmatch(src, -1) {
		tables = append(tables, "\t"+t[1]+" = "+t[2])
		src = strings.Replace(src, t[0], "var "+t[1]+" []"+strings.SplitN(strings.TrimPrefix(t[2], "make([]"), ",", 2)[0], 1)
	}

	var deps []string
	for _, im := range protoImport.FindAllStringSubmatch(src, -1) {
		deps = append(deps, im[1])
	}
	sort.Strings(deps)

	lines := strings.Split(src, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "func "+file+"_init() {" {
			out = append(out, lazyInit(file, deps)...)
			out = append(out, tables...)
			continue
		}
		out = append(out, line)
		if strings.HasPrefix(line, "func ") && strings.HasSuffix(line, "{") && readsTables(lines[i+1:], file) &&
			!strings.HasPrefix(line, "func "+file+"_rawDescGZIP(") {
			out = append(out, "\t"+file+"_init()")
		}
	}
	formatted, err := format.Source([]byte(strings.Join(out, "\n")))
	return string(formatted), err
}

// lazyInit is the head of file_X_proto_init made lazy: a sync.Once around
// the generated body, which registers the imported packages first.
func lazyInit(file string, deps []string) []string {
	lines := []string{
		"// " + file + "_init registers the file once, at its first use (msgbridge's hack/lazyproto).",
		"func " + file + "_init() { " + file + "_once.Do(" + file + "_register) }",
		"",
		"var " + file + "_once sync.Once",
		"",
		"// XXX_RegisterProtoFiles registers this package's files; the packages",
		"// that import it call it before registering their own.",
		"func XXX_RegisterProtoFiles() { " + file + "_init() }",
		"",
		"func " + file + "_register() {",
	}
	for _, d := range deps {
		lines = append(lines, "\t"+d+".XXX_RegisterProtoFiles()")
	}
	return lines
}

// readsTables reports whether the function whose body starts at body reads
// the file's message or enum table or its raw descriptor.
func readsTables(body []string, file string) bool {
	for _, line := range body {
		if line == "}" {
			return false
		}
		if strings.Contains(line, file+"_msgTypes[") || strings.Contains(line, file+"_enumTypes[") ||
			strings.Contains(line, file+"_rawDescGZIP()") {
			return true
		}
	}
	return false
}
