package image

import "io/fs"

// NonRoot is the user the project's image runs as: distroless's nonroot,
// numeric so that runAsNonRoot can check it without reading /etc/passwd.
const NonRoot = 65532

// CABundle is where the image keeps the CA certificates (the webhook's
// HTTPS) and where Go's crypto/x509 looks first on Linux.
const CABundle = "/etc/ssl/certs/ca-certificates.crt"

// distrolessPasswd and distrolessGroup are distroless/static's files.
const (
	distrolessPasswd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	distrolessGroup = "root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n"
)

// Base is what the Dockerfile's base image (distroless/static-debian12,
// nonroot) gives the programs: users, the CA bundle, a home and /tmp.
// caBundle is the machine's bundle to copy.
func Base(caBundle string) []File {
	return []File{
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte(distrolessPasswd)},
		{Path: "/etc/group", Mode: 0o644, Data: []byte(distrolessGroup)},
		{Path: CABundle, Mode: 0o644, Source: caBundle},
		{Path: "/home/nonroot", Mode: fs.ModeDir | 0o700, UID: NonRoot, GID: NonRoot},
		{Path: "/tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
	}
}

// BaseEnv is distroless/static's environment.
var BaseEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"SSL_CERT_FILE=" + CABundle,
}

// Msgbridge is the Dockerfile's image: the operator (/manager, the
// entrypoint) and the bridge (/bridge) on the base, run as NonRoot.
func Msgbridge(manager, bridge, caBundle, version string) Layout {
	files := append(Base(caBundle),
		File{Path: "/manager", Mode: 0o755, Source: manager},
		File{Path: "/bridge", Mode: 0o755, Source: bridge},
	)
	return Layout{
		Files:      files,
		User:       "65532:65532",
		Entrypoint: []string{"/manager"},
		Env:        BaseEnv,
		Labels: map[string]string{
			"org.opencontainers.image.title":       "msgbridge",
			"org.opencontainers.image.description": "WhatsApp bridge (/bridge) and its Kubernetes operator (/manager)",
			"org.opencontainers.image.version":     version,
			"org.opencontainers.image.licenses":    "Apache-2.0",
		},
	}
}

// Program is an image of one static program at /name, run by user
// ("uid:gid"), with nothing else but /tmp: the cluster's pause and CoreDNS
// images.
func Program(name, binary, user string) Layout {
	return Layout{
		Files: []File{
			{Path: "/" + name, Mode: 0o755, Source: binary},
			{Path: "/tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
		},
		User:       user,
		Entrypoint: []string{"/" + name},
	}
}
