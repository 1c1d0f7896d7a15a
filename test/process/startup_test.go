package process

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxOwnInitBytes bounds what each of the bridge's own packages allocates
// while the process initialises: tables of a few entries and short
// patterns fit, while work that only some requests need (parsing the
// dashboard's templates) waits for them, and a pattern never counts to
// hundreds (`{1,512}` compiles to 512 copies of its class: 360 KB and a
// millisecond). Every start pays for package initialisation before its
// first answer.
const maxOwnInitBytes = 32 << 10

// initLine is one line of GODEBUG=inittrace=1: a package's initialisation.
var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, [0-9]+ allocs$`)

func TestOwnPackagesInitialiseCheaply(t *testing.T) {
	skipProcessTest(t)
	cmd := exec.Command(bridgeBin, "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bridge --help: %v\n%s", err, stderr.String())
	}
	own := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], "github.com/msgbridge/msgbridge/") {
			continue
		}
		own++
		if n, _ := strconv.Atoi(m[2]); n > maxOwnInitBytes {
			t.Errorf("package %s allocates %d bytes at initialisation, more than %d: make it lazy", m[1], n, maxOwnInitBytes)
		}
	}
	if own == 0 {
		t.Fatalf("no initialisation of the bridge's packages traced:\n%s", stderr.String())
	}
}
