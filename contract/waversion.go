package contract

import (
	"fmt"
	"regexp"
	"strconv"
)

// WAVersionPattern is the grammar of WA_VERSION and of the resource's
// waVersion: a WhatsApp Web version as WhatsApp numbers it today, 2.3000.N
// with N a revision of up to ten digits and no leading zero. The CRD's
// pattern marker repeats it; a test holds the two together.
const WAVersionPattern = `^2\.3000\.[1-9][0-9]{0,9}$`

var waVersionGrammar = regexp.MustCompile(WAVersionPattern)

// ParseWAVersion reads a WhatsApp Web version (WAVersionPattern) as its
// three parts.
func ParseWAVersion(text string) ([3]uint32, error) {
	if !waVersionGrammar.MatchString(text) {
		return [3]uint32{}, fmt.Errorf("must be a WhatsApp Web version 2.3000.N (N a revision number), got %q", text)
	}
	revision, err := strconv.ParseUint(text[len("2.3000."):], 10, 32)
	if err != nil {
		return [3]uint32{}, fmt.Errorf("the revision of %q is larger than %d", text, uint32(1<<32-1))
	}
	return [3]uint32{2, 3000, uint32(revision)}, nil
}
