package spool

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// maxNameRunes bounds a file's name: a document's name on the recipient's
// phone.
const maxNameRunes = 255

// CleanFileName keeps the base name a client sent, without path parts or
// control characters, so it is safe to show on the recipient's phone.
// Every door names its files through it.
func CleanFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	if name == "." || name == "/" {
		name = ""
	}
	return bridge.Truncate(name, maxNameRunes)
}
