package contract

import (
	"runtime/debug"
	"strings"
	"sync"

	"golang.org/x/mod/semver"
)

// Version of this build, set at link time:
//
//	go build -ldflags "-X github.com/msgbridge/msgbridge/contract.Version=1.2.3"
//
// Read it through BuildVersion, which makes every build's version semantic.
var Version = ""

// develVersion is what a build without a release version reports: a
// pre-release of 0.0.0, so that tools comparing versions still can.
const develVersion = "0.0.0-dev"

// BuildVersion is this build's version, always semantic (MAJOR.MINOR.PATCH,
// optionally -pre+build). A version from the linker flag is used as it is
// when it is semantic (a leading "v" dropped); anything else (a commit hash
// from git describe, "dev", nothing) becomes 0.0.0-dev with what is known of
// the build (the flag's text or the VCS revision) as build metadata.
func BuildVersion() string { return buildVersion() }

// buildVersion is worked out once: every GET /health reports it.
var buildVersion = sync.OnceValue(func() string {
	return semanticVersion(Version, vcsRevision())
})

// isSemantic reports whether v is a whole Semantic Versioning 2.0.0
// version: golang.org/x/mod/semver reads Go's "v"-prefixed form, which also
// allows the shorthands v1 and v1.2; their canonical form is longer than
// them, a whole version's is a prefix of it (only build metadata dropped).
// (A library rather than the specification's regular expression: compiling
// that cost every start a quarter of a millisecond before its first answer.)
func isSemantic(v string) bool {
	gv := "v" + v
	return semver.IsValid(gv) && strings.HasPrefix(gv, semver.Canonical(gv))
}

func semanticVersion(v, revision string) string {
	if len(v) > 1 && v[0] == 'v' {
		v = v[1:]
	}
	if isSemantic(v) {
		return v
	}
	meta := sanitizeMetadata(v)
	if meta == "" {
		meta = sanitizeMetadata(revision)
	}
	if meta == "" {
		return develVersion
	}
	return develVersion + "+" + meta
}

// sanitizeMetadata keeps what build metadata may hold: ASCII letters,
// digits and hyphens, in dot-separated identifiers.
func sanitizeMetadata(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
			out = append(out, c)
		case c == '.' && len(out) > 0 && out[len(out)-1] != '.':
			out = append(out, c)
		}
	}
	for len(out) > 0 && out[len(out)-1] == '.' {
		out = out[:len(out)-1]
	}
	if len(out) > 40 {
		out = out[:40]
	}
	return string(out)
}

func vcsRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return s.Value[:12]
		}
	}
	return ""
}
