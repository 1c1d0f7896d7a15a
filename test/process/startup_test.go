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

// lazyPrefixes are the packages held to maxOwnInitBytes: the bridge's own,
// and whatsmeow's protocol buffer files, which register at their first use
// (third_party/PATCH.md, fix 5) rather than building some fifty descriptors
// (0.6 MB) before every first answer.
var lazyPrefixes = []string{"github.com/msgbridge/msgbridge/", "go.mau.fi/whatsmeow/proto/"}

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
	traced := map[string]int{}
	for _, line := range strings.Split(stderr.String(), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, prefix := range lazyPrefixes {
			if !strings.HasPrefix(m[1], prefix) {
				continue
			}
			traced[prefix]++
			if n, _ := strconv.Atoi(m[2]); n > maxOwnInitBytes {
				t.Errorf("package %s allocates %d bytes at initialisation, more than %d: make it lazy", m[1], n, maxOwnInitBytes)
			}
		}
	}
	for _, prefix := range lazyPrefixes {
		if traced[prefix] == 0 {
			t.Errorf("no initialisation of %s… traced:\n%s", prefix, stderr.String())
		}
	}
}
