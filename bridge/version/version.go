// Package version holds the build's version, set at link time:
//
//	go build -ldflags "-X github.com/msgbridge/msgbridge/bridge/version.Version=1.2.3"
package version

// Version of this build; "dev" for a build without the linker flag.
var Version = "dev"
