// Command gen writes the API description's JSON form (go generate in
// bridge/httpapi/openapi): gen openapi.yaml openapi.json.
package main

import (
	"fmt"
	"os"

	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi/internal/yamljson"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen openapi.yaml openapi.json")
		os.Exit(2)
	}
	if err := generate(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func generate(from, to string) error {
	src, err := os.ReadFile(from) //nolint:gosec // a path go generate names
	if err != nil {
		return err
	}
	out, err := yamljson.Convert(src)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	return os.WriteFile(to, out, 0o644) //nolint:gosec // a source file of the repository
}
