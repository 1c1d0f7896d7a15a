package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markdownLink is a link or an image of Markdown: [text](target) or
// ![alt](target).
var markdownLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// TestDocumentLinksExist: every relative link and image of the project's
// Markdown documents, and every path `make screenshots` writes to, names a
// file of the repository (a moved folder left the README's screenshots
// broken once).
func TestDocumentLinksExist(t *testing.T) {
	docs := []string{"README.md", "docs/architecture.md", "bridge/wasim/README.md"}
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(text), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, m[1])
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
