package contract

import (
	"regexp"
	"runtime/debug"
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

// semver is Semantic Versioning 2.0.0's own grammar.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// BuildVersion is this build's version, always semantic (MAJOR.MINOR.PATCH,
// optionally -pre+build). A version from the linker flag is used as it is
// when it is semantic (a leading "v" dropped); anything else (a commit hash
// from git describe, "dev", nothing) becomes 0.0.0-dev with what is known of
// the build (the flag's text or the VCS revision) as build metadata.
func BuildVersion() string {
	return semanticVersion(Version, vcsRevision())
}

func semanticVersion(v, revision string) string {
	if len(v) > 1 && v[0] == 'v' {
		v = v[1:]
	}
	if semver.MatchString(v) {
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
