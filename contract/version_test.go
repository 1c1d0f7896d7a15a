package contract

import "testing"

func TestSemanticVersion(t *testing.T) {
	for _, tc := range []struct{ flag, revision, want string }{
		{"1.2.3", "", "1.2.3"},
		{"v1.2.3-rc.1+build.5", "", "1.2.3-rc.1+build.5"},
		{"", "", "0.0.0-dev"},
		{"dev", "", "0.0.0-dev+dev"},
		{"", "0123456789ab", "0.0.0-dev+0123456789ab"},
		{"4c7fd2a-dirty", "", "0.0.0-dev+4c7fd2a-dirty"},
		{"1.2", "", "0.0.0-dev+1.2"},
		{"a b/c", "", "0.0.0-dev+abc"},
	} {
		got := semanticVersion(tc.flag, tc.revision)
		if got != tc.want {
			t.Errorf("semanticVersion(%q, %q) = %q, want %q", tc.flag, tc.revision, got, tc.want)
		}
		if !semver.MatchString(got) {
			t.Errorf("semanticVersion(%q, %q) = %q is not semantic", tc.flag, tc.revision, got)
		}
	}
	if v := BuildVersion(); !semver.MatchString(v) {
		t.Errorf("BuildVersion() = %q is not semantic", v)
	}
}
