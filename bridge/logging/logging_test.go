package logging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// clock is a settable clock, so tests decide when midnight comes.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var noon = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

type fixture struct {
	log    logr.Logger
	files  *Files
	stdout *testutil.LockedBuffer // Files serializes its writes, but the test reads while loggers may still write
	dir    string
	clock  *clock
}

func newFixture(t *testing.T, level Level) *fixture {
	t.Helper()
	f := &fixture{stdout: &testutil.LockedBuffer{}, dir: filepath.Join(t.TempDir(), "logs"), clock: newClock(noon)}
	var err error
	f.log, f.files, err = New(Options{Stdout: f.stdout, Dir: f.dir, Level: level, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.files.Close() })
	return f
}

// lines parses JSON lines, failing the test on any line that is not JSON.
func lines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not JSON: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func (f *fixture) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) fileNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestLineShape(t *testing.T) {
	f := newFixture(t, LevelInfo)
	f.clock.Advance(1234567 * time.Microsecond)
	log := f.log.WithName("session").WithName("whatsmeow").WithValues("account", "4917")
	log.Error(errors.New("socket closed"), "reconnect failed", "attempt", 3, "after", 5*time.Second)

	got := lines(t, f.stdout.String())
	if len(got) != 1 {
		t.Fatalf("want 1 line, got %d", len(got))
	}
	want := map[string]any{
		"ts": "2026-11-21T12:00:01.234Z", "level": "error", "logger": "session.whatsmeow",
		"msg": "reconnect failed", "account": "4917", "attempt": float64(3), "after": "5s", "error": "socket closed",
	}
	if fmt.Sprint(got[0]) != fmt.Sprint(want) {
		t.Errorf("line\n got %v\nwant %v", got[0], want)
	}
	if f.file(t, "2026-11-21.error.log") != f.stdout.String() {
		t.Errorf("file and stdout differ")
	}
}

func TestReservedKeysAreRenamed(t *testing.T) {
	f := newFixture(t, LevelInfo)
	f.log.WithValues("error", "ctx").Error(errors.New("e"), "m", "msg", "x", "ts", 1, "level", "error", "logger", "y")
	got := lines(t, f.stdout.String())[0]
	for k, v := range map[string]any{"msg": "m", "msg_": "x", "ts_": float64(1), "level": "error", "level_": "error", "logger_": "y", "error": "e", "error_": "ctx"} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (line %v)", k, got[k], v, got)
		}
	}
}

// Each line goes to its own level's file, and only levels at or above
// LOG_LEVEL are written anywhere.
func TestLevelsGoToTheirOwnFiles(t *testing.T) {
	logAll := func(log logr.Logger) {
		log.V(1).Info("a debug line")
		log.Info("an info line")
		Warn(log, "a warn line", "k", "v")
		log.Info("another warn line", "level", "warn")
		log.Error(nil, "an error line")
	}
	tests := []struct {
		level Level
		files map[string]int // file -> lines
	}{
		{LevelDebug, map[string]int{"2026-11-21.debug.log": 1, "2026-11-21.info.log": 1, "2026-11-21.warn.log": 2, "2026-11-21.error.log": 1}},
		{LevelInfo, map[string]int{"2026-11-21.info.log": 1, "2026-11-21.warn.log": 2, "2026-11-21.error.log": 1}},
		{LevelWarn, map[string]int{"2026-11-21.warn.log": 2, "2026-11-21.error.log": 1}},
		{LevelError, map[string]int{"2026-11-21.error.log": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.level.String(), func(t *testing.T) {
			f := newFixture(t, tt.level)
			logAll(f.log)
			names := f.fileNames(t)
			if len(names) != len(tt.files) {
				t.Fatalf("files %v, want %v", names, tt.files)
			}
			total := 0
			for name, n := range tt.files {
				level := strings.Split(name, ".")[1]
				ls := lines(t, f.file(t, name))
				if len(ls) != n {
					t.Errorf("%s has %d lines, want %d", name, len(ls), n)
				}
				for _, l := range ls {
					if l["level"] != level {
						t.Errorf("%s holds a %v line", name, l["level"])
					}
					if _, ok := l["level_"]; ok {
						t.Errorf("the warn marker leaked into the line: %v", l)
					}
				}
				total += n
			}
			if got := len(lines(t, f.stdout.String())); got != total {
				t.Errorf("stdout has %d lines, files %d", got, total)
			}
		})
	}
}

func TestWarnFromContextValues(t *testing.T) {
	f := newFixture(t, LevelInfo)
	f.log.WithValues("level", "warn").Info("degraded")
	if got := lines(t, f.file(t, "2026-11-21.warn.log")); len(got) != 1 || got[0]["msg"] != "degraded" {
		t.Errorf("warn file: %v", got)
	}
}

type credentials struct {
	Account  string
	Password string
	Key      bridge.Secret
	Nested   map[string]any
	hidden   string
}

func TestSecretsNeverReachALine(t *testing.T) {
	const secret = "s3cr3t-value"
	tests := []struct {
		name string
		kvs  []any
	}{
		{"Secret value", []any{"credential", bridge.Secret(secret)}},
		// The settings are checked the same way in package settings, which
		// imports this one.
		{"struct of secrets", []any{"settings", &struct{ APIKey, EncryptionKey bridge.Secret }{secret, secret}}},
		{"nested struct and map", []any{"creds", credentials{Account: "a", Password: secret, Key: secret,
			Nested: map[string]any{"authorization": "Bearer " + secret, "list": []any{bridge.Secret(secret)}}, hidden: secret}}},
		{"apiKey", []any{"apiKey", secret}},
		{"api_key", []any{"api_key", secret}},
		{"X-Api-Key", []any{"X-Api-Key", secret}},
		{"token", []any{"token", secret}},
		{"adminToken", []any{"adminToken", secret}},
		{"webhookSecret", []any{"webhookSecret", secret}},
		{"password", []any{"password", secret}},
		{"Authorization", []any{"Authorization", secret}},
		{"encryptionKey", []any{"encryptionKey", secret}},
		{"text", []any{"text", secret}},
		{"body", []any{"body", secret}},
		{"caption", []any{"caption", secret}},
		{"bytes", []any{"raw", []byte(secret)}},
		{"pairingCode", []any{"pairingCode", secret}},
		{"qr", []any{"qr", secret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, LevelInfo)
			f.log.Info("event", tt.kvs...)
			f.log.WithValues(tt.kvs...).Info("event")
			f.log.Error(nil, "event", tt.kvs...)
			for where, text := range map[string]string{"stdout": f.stdout.String(),
				"info file": f.file(t, "2026-11-21.info.log"), "error file": f.file(t, "2026-11-21.error.log")} {
				if strings.Contains(text, secret) {
					t.Errorf("%s holds the secret:\n%s", where, text)
				}
				lines(t, text) // and stays JSON
			}
		})
	}
}

func TestKeysThatOnlyLookLikeBodiesStay(t *testing.T) {
	f := newFixture(t, LevelInfo)
	f.log.Info("m", "textLength", 12, "recipient", "4917", "type", "text")
	got := lines(t, f.stdout.String())[0]
	if got["textLength"] != float64(12) || got["recipient"] != "4917" || got["type"] != "text" {
		t.Errorf("over-redacted: %v", got)
	}
}

func TestFilesSwitchAtUTCMidnight(t *testing.T) {
	f := newFixture(t, LevelInfo)
	f.clock.Advance(12*time.Hour - time.Millisecond) // 23:59:59.999
	f.log.Info("before")
	f.clock.Advance(time.Millisecond)
	f.log.Info("after")
	before := lines(t, f.file(t, "2026-11-21.info.log"))
	after := lines(t, f.file(t, "2026-11-22.info.log"))
	if len(before) != 1 || before[0]["msg"] != "before" || before[0]["ts"] != "2026-11-21T23:59:59.999Z" {
		t.Errorf("day 1: %v", before)
	}
	if len(after) != 1 || after[0]["msg"] != "after" || after[0]["ts"] != "2026-11-22T00:00:00.000Z" {
		t.Errorf("day 2: %v", after)
	}
}

func TestDayIsUTCWhateverTheClockZone(t *testing.T) {
	f := newFixture(t, LevelInfo)
	tokyo := time.FixedZone("JST", 9*3600)
	f.clock.t = time.Date(2026, 11, 22, 8, 0, 0, 0, tokyo) // 2026-11-21 23:00 UTC
	f.log.Info("m")
	if got := f.fileNames(t); len(got) != 1 || got[0] != "2026-11-21.info.log" {
		t.Errorf("files %v", got)
	}
}

func TestFilesAreOwnerOnly(t *testing.T) {
	f := newFixture(t, LevelInfo)
	f.log.Info("m")
	fi, err := os.Stat(filepath.Join(f.dir, "2026-11-21.info.log"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestRemoveRecreatesOnTheNextLine(t *testing.T) {
	f := newFixture(t, LevelInfo)
	f.log.Info("purged")
	if err := f.files.Remove(noon, LevelInfo); err != nil {
		t.Fatal(err)
	}
	f.log.Info("kept") // same instant: no deletion check is due, Remove closed the file
	got := lines(t, f.file(t, "2026-11-21.info.log"))
	if len(got) != 1 || got[0]["msg"] != "kept" {
		t.Errorf("after purge: %v", got)
	}
	if err := f.files.Remove(noon, LevelInfo); err != nil {
		t.Fatal(err)
	}
	if err := f.files.Remove(noon, LevelInfo); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removing an absent file: %v, want fs.ErrNotExist", err)
	}
	if err := f.files.Remove(noon, LevelWarn); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removing a never-written file: %v, want fs.ErrNotExist", err)
	}
}

// A file deleted behind the logger's back (rm, a sidecar) is recreated once
// the deletion check is due, at most a second later.
func TestFileDeletedUnderneathIsRecreated(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(fmt.Sprintf("replaced=%v", replace), func(t *testing.T) {
			f := newFixture(t, LevelInfo)
			path := filepath.Join(f.dir, "2026-11-21.info.log")
			f.log.Info("first")
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if replace {
				if err := os.WriteFile(path, []byte(`{"msg":"other"}`+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			f.clock.Advance(deletionCheckInterval)
			f.log.Info("second")
			got := lines(t, f.file(t, "2026-11-21.info.log"))
			if msg := got[len(got)-1]["msg"]; msg != "second" {
				t.Errorf("last line %v, want second (file %v)", msg, got)
			}
		})
	}
}

func TestConcurrentWritersLoseNoLine(t *testing.T) {
	f := newFixture(t, LevelInfo)
	const writers, each = 16, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			log := f.log.WithValues("writer", w)
			for i := range each {
				log.Info("line", "i", i, "pad", strings.Repeat("x", 300))
				if i%100 == 0 {
					f.clock.Advance(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	for where, text := range map[string]string{"stdout": f.stdout.String(), "file": f.file(t, "2026-11-21.info.log")} {
		seen := map[string]bool{}
		for _, l := range lines(t, text) {
			seen[fmt.Sprint(l["writer"], "/", l["i"])] = true
		}
		if len(seen) != writers*each {
			t.Errorf("%s: %d distinct lines, want %d", where, len(seen), writers*each)
		}
	}
}

func TestClosedFilesLeaveStdout(t *testing.T) {
	f := newFixture(t, LevelInfo)
	if err := f.files.Close(); err != nil {
		t.Fatal(err)
	}
	f.log.Info("late")
	if len(lines(t, f.stdout.String())) != 1 {
		t.Errorf("stdout: %q", f.stdout.String())
	}
	if names := f.fileNames(t); len(names) != 0 {
		t.Errorf("files written after Close: %v", names)
	}
}

func TestStdoutOnly(t *testing.T) {
	var out testutil.LockedBuffer
	log, files, err := New(Options{Stdout: &out, Level: LevelInfo, Now: newClock(noon).Now})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("m")
	if len(lines(t, out.String())) != 1 {
		t.Errorf("stdout: %q", out.String())
	}
	if err := files.Remove(noon, LevelInfo); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove without a directory: %v", err)
	}
}

type panicky struct{}

func (panicky) String() string { panic("boom") }

func TestValues(t *testing.T) {
	type inner struct {
		N    int     `json:"n"`
		Skip string  `json:"-"`
		F    float64 `json:"f,omitempty"`
	}
	var nilPtr *inner
	tests := []struct {
		v    any
		want string
	}{
		{nil, `null`},
		{"a\"b\\c\n\t\x01\u2028", `"a\"b\\c\n\t\u0001\u2028"`},
		{"\xff", `"\ufffd"`},
		{true, `true`},
		{int8(-3), `-3`},
		{uint64(1 << 63), `9223372036854775808`},
		{1.5, `1.5`},
		{float32(0.25), `0.25`},
		{[]float64{1, 2}, `[1,2]`},
		{map[string]int{"b": 2, "a": 1}, `{"a":1,"b":2}`},
		{inner{N: 1, Skip: "x", F: 2}, `{"n":1,"f":2}`},
		{&inner{N: 1}, `{"n":1,"f":0}`},
		{nilPtr, `null`},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), `"2026-01-02T03:04:05Z"`},
		{errors.New("e"), `"e"`},
		{json.RawMessage(`{"x":1}`), `{"x":1}`},
		{panicky{}, `"<panic: boom>"`},
		{make(chan int), `"chan int"`},
	}
	for _, tt := range tests {
		got := string(appendValue(nil, tt.v, 0))
		if got != tt.want {
			t.Errorf("%#v: got %s, want %s", tt.v, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%#v: %s is not JSON", tt.v, got)
		}
	}
}

func TestCyclicValueIsBounded(t *testing.T) {
	type node struct{ Next *node }
	n := &node{}
	n.Next = n
	if got := appendValue(nil, n, 0); !json.Valid(got) || !strings.Contains(string(got), "max depth") {
		t.Errorf("got %s", got)
	}
}

func FuzzLineIsJSON(f *testing.F) {
	f.Add("msg", "key", "value", "name")
	f.Add("a\"\n\xff", "apiKey", "\u2028\x00", "")
	f.Fuzz(func(t *testing.T, msg, key, value, name string) {
		var out bytes.Buffer
		log, _, err := New(Options{Stdout: &out, Level: LevelDebug, Now: newClock(noon).Now})
		if err != nil {
			t.Fatal(err)
		}
		if name != "" {
			log = log.WithName(name)
		}
		log.WithValues(key, value).Info(msg, key, value, value, key)
		log.Error(errors.New(value), msg, key, []string{value})
		sc := bufio.NewScanner(&out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("not JSON: %q", sc.Text())
			}
		}
		if n != 2 {
			t.Fatalf("%d lines, want 2: %q", n, out.String())
		}
	})
}

// With a bound, a day's file is set aside within its day when it reaches a
// sixteenth of the bound, and the oldest files go: 30 days of an error
// flood leave the directory within the bound, the latest lines kept.
func TestFilesStayWithinTheirBound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	clock := newClock(noon)
	const bound = 64 << 10
	log, files, err := New(Options{Dir: dir, Level: LevelInfo, Now: clock.Now, MaxBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = files.Close() })
	var written int
	for day := range 30 {
		for i := range 2000 {
			log.Error(errors.New("refused"), "a flood", "day", day, "i", i)
			written++
		}
		clock.Advance(24 * time.Hour)
	}
	var total int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, _ := e.Info()
		total += fi.Size()
	}
	if total > bound {
		t.Errorf("%d lines left %d bytes in %d files, over the bound of %d", written, total, len(entries), bound)
	}
	last, err := os.ReadFile(filepath.Join(dir, FileName(noon.Add(29*24*time.Hour), LevelError)))
	if err != nil || !strings.Contains(string(last), `"i":1999`) {
		t.Errorf("the last day's file lacks its last line: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "2026-12-20.error.1.log")); err != nil {
		t.Errorf("the last day's full part was not set aside: %v", err)
	}
	if err := files.Remove(noon.Add(29*24*time.Hour), LevelError); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "2026-12-20.error.1.log")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a purge left the day's part set aside: %v", err)
	}
}
