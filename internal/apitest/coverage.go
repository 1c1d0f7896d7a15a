package apitest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The environment variables of the coverage across test processes (see the
// package comment).
const (
	// CoverageDirEnv names the directory each test process appends its
	// records to; unset, records stay in the process.
	CoverageDirEnv = "APITEST_COVERAGE_DIR"
	// CoverageCheckEnv, set, makes TestOpenAPICoverage judge the records.
	CoverageCheckEnv = "APITEST_COVERAGE_CHECK"
)

// Hit is one exercised operation: its operationId, the status the bridge
// answered (0 for a webhook event) and the test that exercised it.
type Hit struct {
	Operation string
	Status    int
	Test      string
}

var coverage struct {
	sync.Mutex
	seen map[Hit]bool
	dir  string // where file is
	file *os.File
	err  error
}

// record notes a hit in this process and, when CoverageDirEnv is set, in
// this process's file there. Only the first of equal hits is written.
func record(t testing.TB, op string, status int) {
	t.Helper()
	h := Hit{Operation: op, Status: status, Test: t.Name()}
	coverage.Lock()
	defer coverage.Unlock()
	if coverage.seen[h] {
		return
	}
	if coverage.seen == nil {
		coverage.seen = map[Hit]bool{}
	}
	coverage.seen[h] = true
	dir := os.Getenv(CoverageDirEnv)
	if dir == "" {
		return
	}
	if coverage.dir != dir { // the first record, or a test's own directory (t.Setenv)
		if coverage.file != nil {
			_ = coverage.file.Close()
		}
		coverage.dir, coverage.file, coverage.err = dir, nil, nil
		name := filepath.Join(dir, fmt.Sprintf("hits-%d.tsv", os.Getpid()))
		coverage.file, coverage.err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600) //nolint:gosec // a test's own directory
	}
	if coverage.err == nil {
		// One write per line: O_APPEND keeps lines whole.
		_, coverage.err = fmt.Fprintf(coverage.file, "%s\t%d\t%s\n", h.Operation, h.Status, h.Test)
	}
	if coverage.err != nil {
		t.Errorf("apitest: record coverage in %s: %v", dir, coverage.err)
	}
}

// Exercised lists this process's hits, sorted.
func Exercised() []Hit {
	coverage.Lock()
	defer coverage.Unlock()
	out := make([]Hit, 0, len(coverage.seen))
	for h := range coverage.seen {
		out = append(out, h)
	}
	sortHits(out)
	return out
}

func sortHits(hs []Hit) {
	slices.SortFunc(hs, func(a, b Hit) int {
		return strings.Compare(fmt.Sprintf("%s\t%03d\t%s", a.Operation, a.Status, a.Test),
			fmt.Sprintf("%s\t%03d\t%s", b.Operation, b.Status, b.Test))
	})
}

// ReadCoverage reads the hits every process wrote to dir.
func ReadCoverage(dir string) ([]Hit, error) {
	files, err := filepath.Glob(filepath.Join(dir, "hits-*.tsv"))
	if err != nil {
		return nil, err
	}
	seen := map[Hit]bool{}
	for _, name := range files {
		if err := readHits(name, seen); err != nil {
			return nil, err
		}
	}
	out := make([]Hit, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	sortHits(out)
	return out, nil
}

func readHits(name string, into map[Hit]bool) error {
	f, err := os.Open(name) //nolint:gosec // a file this package wrote
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 3 {
			return fmt.Errorf("%s:%d: want 3 tab-separated fields", name, line)
		}
		status, err := strconv.Atoi(fields[1])
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		into[Hit{Operation: fields[0], Status: status, Test: fields[2]}] = true
	}
	return sc.Err()
}

// Operation is one documented operation: an endpoint's method and path,
// or a webhook event (Method POST, Path "webhook <event>").
type Operation struct {
	ID     string
	Method string
	Path   string
}

func (o Operation) String() string { return o.Method + " " + o.Path + " (" + o.ID + ")" }

// Operations lists the document's operations, in its order, then its
// webhook events.
func Operations() ([]Operation, error) {
	s, err := loadSpec()
	if err != nil {
		return nil, err
	}
	var out []Operation
	for path, item := range s.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			out = append(out, Operation{ID: op.OperationId, Method: strings.ToUpper(method), Path: path})
		}
	}
	if s.model.Webhooks != nil {
		for event, item := range s.model.Webhooks.FromOldest() {
			if item.Post != nil {
				out = append(out, Operation{ID: item.Post.OperationId, Method: "POST", Path: "webhook " + event})
			}
		}
	}
	return out, nil
}

// Uncovered lists the documented operations that no hit names.
func Uncovered(hits []Hit) ([]Operation, error) {
	ops, err := Operations()
	if err != nil {
		return nil, err
	}
	called := map[string]bool{}
	for _, h := range hits {
		called[h.Operation] = true
	}
	var out []Operation
	for _, op := range ops {
		if !called[op.ID] {
			out = append(out, op)
		}
	}
	return out, nil
}

// Report is a Markdown table of every documented operation with the
// statuses it was seen answering and the tests that exercised it.
func Report(hits []Hit) (string, error) {
	ops, err := Operations()
	if err != nil {
		return "", err
	}
	statuses, tests := map[string][]string{}, map[string][]string{}
	for _, h := range hits {
		if h.Status != 0 {
			statuses[h.Operation] = appendNew(statuses[h.Operation], strconv.Itoa(h.Status))
		}
		tests[h.Operation] = appendNew(tests[h.Operation], h.Test)
	}
	var b strings.Builder
	b.WriteString("| operation | statuses seen | tests |\n|---|---|---|\n")
	for _, op := range ops {
		st, ts := strings.Join(statuses[op.ID], ", "), strings.Join(tests[op.ID], ", ")
		if ts == "" {
			ts = "**none**"
		}
		fmt.Fprintf(&b, "| `%s %s` | %s | %s |\n", op.Method, op.Path, st, ts)
	}
	return b.String(), nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	list = append(list, s)
	slices.Sort(list)
	return list
}
