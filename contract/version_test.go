package contract

import (
	"regexp"
	"testing"
)

// semverGrammar is Semantic Versioning 2.0.0's own grammar: what isSemantic
// must agree with.
var semverGrammar = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

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
		if !semverGrammar.MatchString(got) {
			t.Errorf("semanticVersion(%q, %q) = %q is not semantic", tc.flag, tc.revision, got)
		}
	}
	if v := BuildVersion(); !semverGrammar.MatchString(v) {
		t.Errorf("BuildVersion() = %q is not semantic", v)
	}
}

func TestIsSemanticFollowsTheGrammar(t *testing.T) {
	for _, v := range []string{
		"1.2.3", "0.0.0", "1.2.3-rc.1+build.5", "1.2.3+001", "1.2.3-0a.b-c",
		"1", "1.2", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "1.2.3-a..b", "v1.2.3", "1.2.3.4", "",
	} {
		if got, want := isSemantic(v), semverGrammar.MatchString(v); got != want {
			t.Errorf("isSemantic(%q) = %v, the grammar says %v", v, got, want)
		}
	}
}

func FuzzIsSemantic(f *testing.F) {
	for _, v := range []string{"1.2.3-rc.1+build.5", "1.2", "1.2.3-01", "0.0.0-dev+abc"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := isSemantic(v), semverGrammar.MatchString(v); got != want {
			t.Errorf("isSemantic(%q) = %v, the grammar says %v", v, got, want)
		}
	})
}
