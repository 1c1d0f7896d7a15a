// Command docgen writes the references of docs/ that come from the code
// (internal/docgen): the MessagingBridge resource from its CRD and the
// bridge's settings from bridge/settings. Run it from the repository's root
// (make docs) after changing either; docs_test.go fails until it ran.
package main

import (
	"fmt"
	"os"

	"github.com/msgbridge/msgbridge/internal/docgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run() error {
	crd, err := os.ReadFile(docgen.CRDPath)
	if err != nil {
		return err
	}
	resource, err := docgen.ResourceReference(crd)
	if err != nil {
		return err
	}
	if err := os.WriteFile(docgen.ResourcePage, []byte(resource), 0o644); err != nil { //nolint:gosec // a page of the repository
		return err
	}
	page, err := os.ReadFile(docgen.SettingsPage)
	if err != nil {
		return err
	}
	updated, err := docgen.WithSettingsTable(string(page))
	if err != nil {
		return err
	}
	return os.WriteFile(docgen.SettingsPage, []byte(updated), 0o644) //nolint:gosec // a page of the repository
}
