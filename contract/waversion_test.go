package contract

import "testing"

func TestParseWAVersion(t *testing.T) {
	for _, good := range []struct {
		text string
		want [3]uint32
	}{
		{"2.3000.1045649367", [3]uint32{2, 3000, 1045649367}},
		{"2.3000.1", [3]uint32{2, 3000, 1}},
		{"2.3000.4294967295", [3]uint32{2, 3000, 4294967295}},
	} {
		if got, err := ParseWAVersion(good.text); err != nil || got != good.want {
			t.Errorf("ParseWAVersion(%q) = %v, %v; want %v", good.text, got, err, good.want)
		}
	}
	for _, bad := range []string{"", "2.3000", "2.3000.", "2.3000.0", "2.3000.01", "2.2413.1", "3.3000.5", " 2.3000.5",
		"2.3000.5 ", "2.3000.5.1", "2.3000.-5", "2.3000.4294967296", "2.3000.99999999999", "v2.3000.5"} {
		if _, err := ParseWAVersion(bad); err == nil {
			t.Errorf("ParseWAVersion(%q) accepted", bad)
		}
	}
}

func FuzzParseWAVersion(f *testing.F) {
	f.Add("2.3000.1045649367")
	f.Add("2.3000.0")
	f.Fuzz(func(t *testing.T, text string) {
		v, err := ParseWAVersion(text)
		if err != nil {
			return
		}
		if v[0] != 2 || v[1] != 3000 || v[2] == 0 {
			t.Fatalf("ParseWAVersion(%q) = %v", text, v)
		}
	})
}
