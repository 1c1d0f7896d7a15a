package bridge

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseEmoji(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"", true}, {"👍", true}, {"👍🏽", true}, {"❤️", true}, {"🇩🇪", true}, {"👨‍👩‍👧‍👦", true}, {"1️⃣", true}, {"©", true},
		{"🏴󠁧󠁢󠁳󠁣󠁴󠁿", true},
		{"a", false}, {"ok", false}, {"1", false}, {" 👍", false}, {"👍 ", false}, {"\u200d👍", false}, {"\ufe0f", false},
		{"\xff", false}, {"👍\n", false}, {string(make([]rune, 0)) + "👍👍👍👍👍👍👍👍👍👍👍", false},
	} {
		got, err := ParseEmoji(tc.in)
		if (err == nil) != tc.ok || (err == nil && got != tc.in) {
			t.Errorf("ParseEmoji(%q) = %q, %v; want ok=%v", tc.in, got, err, tc.ok)
		}
		if err != nil && ErrorOf(err).Code != "invalid_emoji" {
			t.Errorf("ParseEmoji(%q): code %s", tc.in, ErrorOf(err).Code)
		}
	}
}

func FuzzParseEmoji(f *testing.F) {
	for _, s := range []string{"", "👍", "👍🏽", "❤️", "1️⃣", "🇩🇪", "a", "\xff", "\u200d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseEmoji(s)
		if err != nil {
			return
		}
		if got != s || len(s) > maxEmojiBytes || !utf8.ValidString(s) {
			t.Fatalf("accepted %q as %q", s, got)
		}
		for _, r := range s {
			if r < 0x80 && (r < '0' || r > '9') && r != '#' && r != '*' {
				t.Fatalf("accepted ASCII %q in %q", r, s)
			}
		}
	})
}

func FuzzParseChatPresence(f *testing.F) {
	for _, s := range []string{"composing", "recording", "paused", "typing", "", "Composing"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseChatPresence(s)
		valid := s == "composing" || s == "recording" || s == "paused"
		if (err == nil) != valid || (valid && string(p) != s) {
			t.Fatalf("ParseChatPresence(%q) = %q, %v", s, p, err)
		}
		if err != nil && ErrorOf(err).Code != "invalid_state" {
			t.Fatalf("code %s", ErrorOf(err).Code)
		}
	})
}

func TestFailReason(t *testing.T) {
	for _, tc := range []struct {
		status    Status
		lastError string
		want      string
	}{
		{StatusSent, "", ""}, {StatusQueued, "not_linked: x", ""},
		{StatusFailed, "not_on_whatsapp", FailNotOnWhatsApp}, {StatusFailed, "logged_out", FailLoggedOut},
		{StatusFailed, "edit_window_expired", FailEditWindowExpired}, {StatusFailed, "not_linked: x", FailRetriesExhausted},
	} {
		if got := (Message{Status: tc.status, LastError: tc.lastError}).FailReason(); got != tc.want {
			t.Errorf("%s %q: %q, want %q", tc.status, tc.lastError, got, tc.want)
		}
	}
	if r, ok := PermanentFailure(&Error{Kind: KindNotFound, Code: FailNotOnWhatsApp, Message: "other words"}); !ok || r != FailNotOnWhatsApp {
		t.Errorf("a copy of ErrNotOnWhatsApp: %q %v", r, ok)
	}
	if _, ok := PermanentFailure(ErrNotLinked); ok {
		t.Error("not_linked is permanent")
	}
}

// FuzzParseStatus: any input is refused or read as one of the statuses,
// whose spelling it equals but for case.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"Queued", "queued", "READ", "", "Sent\x00", "İ", "\u017fent"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, ok := ParseStatus(s)
		if ok != st.Valid() || (ok && (len(s) != len(st) || !strings.EqualFold(s, string(st)))) {
			t.Fatalf("ParseStatus(%q) = %q, %v", s, st, ok)
		}
	})
}
