module go.mau.fi/whatsmeow

go 1.24.0

toolchain go1.25.5

require (
	github.com/beeper/argo-go v1.1.2
	github.com/coder/websocket v1.8.14
	github.com/google/uuid v1.6.0
	github.com/rs/zerolog v1.34.0
	go.mau.fi/libsignal v0.2.1
	go.mau.fi/util v0.9.4
	golang.org/x/crypto v0.46.0
	golang.org/x/net v0.48.0
	google.golang.org/protobuf v1.36.11
)

require (
	filippo.io/edwards25519 v1.1.0 // indirect
	github.com/elliotchance/orderedmap/v3 v3.1.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/petermattis/goid v0.0.0-20251121121749-a11dd1a45f9a // indirect
	github.com/vektah/gqlparser/v2 v2.5.27 // indirect
	golang.org/x/exp v0.0.0-20251209150349-8475f28825e9 // indirect
	golang.org/x/sys v0.39.0 // indirect
	golang.org/x/text v0.32.0 // indirect
)
