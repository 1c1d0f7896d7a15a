// Command errcodes gives every error code of the bridge a name: it finds the
// string literals passed as a code to bridge.Invalid, bridge.Internal,
// bridge.Errorf and &bridge.Error{Code: …} in bridge/ (tests and the
// simulator left out), adds the codes bridge/codes.go lacks to its table and
// rewrites the literals to the constants. Running it again changes nothing,
// so it can be re-run after merging branches that added errors.
//
//	go run ./hack/errcodes        # from the repository's root
//	go run ./hack/errcodes -check # list the literals, change nothing
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	check := flag.Bool("check", false, "list the codes written as literals and exit 1 if there are any; change nothing")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "errcodes:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	sites, err := scan(filepath.Join(root, "bridge"))
	if err != nil {
		return err
	}
	literals := literalSites(sites)
	if check {
		for _, s := range literals {
			fmt.Printf("%s: error code %q written as a literal\n", s.pos, s.code)
		}
		if len(literals) > 0 {
			return fmt.Errorf("%d error codes written as literals; run go run ./hack/errcodes", len(literals))
		}
		return nil
	}
	tablePath := filepath.Join(root, "bridge", "codes.go")
	rows, err := readTable(tablePath)
	if err != nil {
		return err
	}
	for _, code := range addSites(rows, literals) {
		fmt.Printf("new code %s\n", code)
	}
	for _, s := range sites {
		if row, ok := rows[s.code]; ok && s.kind != "" && s.kind != row.kind {
			fmt.Printf("%s: %s answered with %s; its row says %s\n", s.pos, s.code, s.kind, row.kind)
		}
	}
	if err := writeTable(tablePath, rows); err != nil {
		return err
	}
	return rewrite(literals, rows)
}

func literalSites(sites []site) []site {
	var out []site
	for _, s := range sites {
		if s.literal != nil {
			out = append(out, s)
		}
	}
	return out
}

// rewrite replaces each literal with its constant, file by file, from the
// end so that earlier offsets stay right.
func rewrite(literals []site, rows map[string]entry) error {
	byFile := map[string][]site{}
	for _, s := range literals {
		byFile[s.file] = append(byFile[s.file], s)
	}
	for file, sites := range byFile {
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		sort.Slice(sites, func(i, j int) bool { return sites[i].pos.Offset > sites[j].pos.Offset })
		for _, s := range sites {
			name := rows[s.code].name
			if !s.inPkg {
				name = "bridge." + name
			}
			end := s.pos.Offset + len(s.literal.Value)
			src = bytes.Join([][]byte{src[:s.pos.Offset], []byte(name), src[end:]}, nil)
		}
		out, err := format.Source(src)
		if err != nil {
			return fmt.Errorf("format %s: %w", file, err)
		}
		if err := writeIfChanged(file, out); err != nil {
			return err
		}
	}
	return nil
}
