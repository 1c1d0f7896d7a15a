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

// lazyPrefixes are the packages held to maxOwnInitBytes: the bridge's own.
// (whatsmeow is upstream's as it is: its protocol buffer files register at
// start-up, DESIGN 20.)
var lazyPrefixes = []string{"github.com/msgbridge/msgbridge/"}

// initLine is one line of GODEBUG=inittrace=1: a package's initialisation.
var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, [0-9]+ allocs$`)

// initRecord is one package's initialisation as GODEBUG=inittrace=1 shows it.
type initRecord struct {
	pkg   string
	bytes int
}

// traceInitialisation runs the bridge's --help with GODEBUG=inittrace=1 and
// returns the packages' initialisations in the order they ran.
func traceInitialisation(t *testing.T) ([]initRecord, string) {
	t.Helper()
	cmd := exec.Command(bridgeBin, "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bridge --help: %v\n%s", err, stderr.String())
	}
	var records []initRecord
	for _, line := range strings.Split(stderr.String(), "\n") {
		if m := initLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			records = append(records, initRecord{pkg: m[1], bytes: n})
		}
	}
	return records, stderr.String()
}

func TestOwnPackagesInitialiseCheaply(t *testing.T) {
	skipProcessTest(t)
	records, trace := traceInitialisation(t)
	traced := map[string]int{}
	for _, r := range records {
		for _, prefix := range lazyPrefixes {
			if !strings.HasPrefix(r.pkg, prefix) {
				continue
			}
			traced[prefix]++
			if r.bytes > maxOwnInitBytes {
				t.Errorf("package %s allocates %d bytes at initialisation, more than %d: make it lazy", r.pkg, r.bytes, maxOwnInitBytes)
			}
		}
	}
	for _, prefix := range lazyPrefixes {
		if traced[prefix] == 0 {
			t.Errorf("no initialisation of %s… traced:\n%s", prefix, trace)
		}
	}
}
