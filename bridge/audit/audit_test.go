package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

var (
	masterKey = testutil.TestKey()
	saturday  = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) // 2026-W47
	w47       = Week{2026, 47}
	w48       = Week{2026, 48}
)

func openLog(t *testing.T) (*Trail, *clocktesting.FakeClock, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "audit")
	c := clocktesting.NewFakeClock(saturday)
	l, err := Open(dir, masterKey, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, c, dir
}

func record(t *testing.T, l *Trail, action Action) string {
	t.Helper()
	id, err := l.Record(context.Background(), Entry{Action: action, Outcome: OutcomeSuccess, Client: "10.0.0.7", Detail: "d"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func ids(t *testing.T, l *Trail, w Week) []string {
	t.Helper()
	entries, err := l.List(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range entries {
		out = append(out, e.ID)
	}
	return out
}

func TestRecordListDelete(t *testing.T) {
	ctx := context.Background()
	l, c, _ := openLog(t)
	a := record(t, l, ActionPairingQR)
	c.Step(time.Minute)
	b := record(t, l, ActionLogout)
	entries, err := l.List(ctx, w47)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{ID: a, Time: saturday, Action: ActionPairingQR, Outcome: OutcomeSuccess, Client: "10.0.0.7", Detail: "d"},
		{ID: b, Time: saturday.Add(time.Minute), Action: ActionLogout, Outcome: OutcomeSuccess, Client: "10.0.0.7", Detail: "d"},
	}
	if fmt.Sprint(entries) != fmt.Sprint(want) {
		t.Fatalf("list\n got %v\nwant %v", entries, want)
	}
	if err := l.Delete(ctx, w47, b); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, w47, b); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
	// The last ID is not handed out again after its deletion.
	if next := record(t, l, ActionLogout); mustRow(t, next) <= mustRow(t, b) {
		t.Errorf("ID %s reused (deleted %s)", next, b)
	}
	if got := ids(t, l, w47); len(got) != 2 || got[0] != a {
		t.Errorf("after delete: %v", got)
	}
}

func mustRow(t *testing.T, id string) int64 {
	t.Helper()
	n, ok := rowID(id)
	if !ok {
		t.Fatalf("the log handed out id %q, which names no row", id)
	}
	return n
}

func TestRowID(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"0", 0, false},
		{"01", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5", 0, false},
		{"..", 0, false},
		{"1/2", 0, false},
		{"no-such-record", 0, false},
		{"", 0, false},
	} {
		if got, ok := rowID(c.in); ok != c.ok || (ok && got != c.want) {
			t.Errorf("rowID(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// An ID the log never handed out names no record, whatever its form: the
// deletion is ErrNotFound and leaves the records alone.
func TestDeleteUnknownIDs(t *testing.T) {
	l, _, _ := openLog(t)
	kept := record(t, l, ActionLogout)
	for _, id := range []string{"no-such-record", "0", "01", "+" + kept, kept + ".0", "..", "1/2", "", "99"} {
		if err := l.Delete(context.Background(), w47, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q) = %v, want ErrNotFound", id, err)
		}
	}
	if got := ids(t, l, w47); fmt.Sprint(got) != fmt.Sprint([]string{kept}) {
		t.Errorf("records after the refused deletions: %v", got)
	}
}

func TestWeeksAreSeparateFiles(t *testing.T) {
	ctx := context.Background()
	l, c, dir := openLog(t)
	first := record(t, l, ActionPairingCode)
	c.Step(38 * time.Hour) // Monday 00:00 UTC: 2026-W48
	second := record(t, l, ActionLogout)
	for _, name := range []string{"2026-W47.db", "2026-W48.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := ids(t, l, w47); fmt.Sprint(got) != fmt.Sprint([]string{first}) {
		t.Errorf("W47: %v", got)
	}
	if got := ids(t, l, w48); fmt.Sprint(got) != fmt.Sprint([]string{second}) {
		t.Errorf("W48: %v", got)
	}
	// A past week is opened for the call and closed again.
	if err := l.Delete(ctx, w47, first); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, w47, first); !errors.Is(err, ErrNotFound) {
		t.Errorf("past week, second delete: %v", err)
	}
}

func TestAbsentWeekIsEmptyAndCreatesNothing(t *testing.T) {
	l, _, dir := openLog(t)
	got, err := l.List(context.Background(), Week{2020, 53})
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("List = %v, %v; want an empty, non-nil list", got, err)
	}
	if err := l.Delete(context.Background(), Week{2020, 53}, "1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete = %v, want ErrNotFound", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files created: %v", entries)
	}
}

func TestRecordsSurviveReopen(t *testing.T) {
	l, c, dir := openLog(t)
	id := record(t, l, ActionDashboardSignIn)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir, masterKey, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = again.Close() }()
	if got := ids(t, again, w47); fmt.Sprint(got) != fmt.Sprint([]string{id}) {
		t.Errorf("after reopen: %v", got)
	}
}

func TestWrongKeyIsRefused(t *testing.T) {
	l, c, dir := openLog(t)
	record(t, l, ActionLogout)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Verify(context.Background(), dir, masterKey); err != nil {
		t.Errorf("Verify with the right key: %v", err)
	}
	other := bytes.Repeat([]byte{8}, sqlite.MasterKeyLen)
	if err := Verify(context.Background(), dir, other); !errors.Is(err, sqlite.ErrWrongKey) {
		t.Errorf("Verify with another key: %v, want ErrWrongKey", err)
	}
	wrong, err := Open(dir, other, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = wrong.Close() }()
	if _, err := wrong.List(context.Background(), w47); !errors.Is(err, sqlite.ErrWrongKey) {
		t.Errorf("List with another key: %v, want ErrWrongKey", err)
	}
	if err := Verify(context.Background(), filepath.Join(dir, "absent"), other); err != nil {
		t.Errorf("Verify of an absent dir: %v", err)
	}
}

func TestConcurrentRecordsAcrossAWeekTurn(t *testing.T) {
	l, c, _ := openLog(t)
	c.Step(38*time.Hour - 50*time.Millisecond) // Sunday 23:59:59.95
	const writers, each = 4, 10
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := l.Record(context.Background(), Entry{Action: ActionLogPurge, Outcome: OutcomeSuccess}); err != nil {
					t.Error(err)
				}
				c.Step(time.Millisecond)
			}
		})
	}
	wg.Wait()
	if n := len(ids(t, l, w47)) + len(ids(t, l, w48)); n != writers*each {
		t.Errorf("%d records, want %d", n, writers*each)
	}
}
