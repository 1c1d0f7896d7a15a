package image

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var repoRoot = filepath.Join("..", "..", "..")

// distrolessBase is the Dockerfile's base image, whose content Base copies
// (users, CA bundle, home, /tmp). Another base needs another Base.
const distrolessBase = "gcr.io/distroless/static-debian12:nonroot"

// finalStage is what the Dockerfile's last stage says about the image.
type finalStage struct {
	from       string
	user       string
	entrypoint []string
	copies     map[string]string // destination -> source
	labels     map[string]string
}

// parseDockerfile reads the instructions of the last stage (continuation
// lines joined, comments dropped).
func parseDockerfile(t *testing.T, text string) finalStage {
	t.Helper()
	joined := strings.ReplaceAll(text, "\\\n", " ")
	var s finalStage
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		args := strings.Fields(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			s = finalStage{from: args[len(args)-1], copies: map[string]string{}, labels: map[string]string{}}
			if len(args) >= 3 && strings.EqualFold(args[len(args)-2], "AS") {
				s.from = args[len(args)-3]
			}
		case "USER":
			s.user = args[0]
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &s.entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT %s: not the exec form: %v", rest, err)
			}
		case "COPY":
			s.copies[args[len(args)-1]] = args[len(args)-2]
		case "LABEL":
			for _, kv := range splitLabels(rest) {
				k, v, _ := strings.Cut(kv, "=")
				s.labels[k] = strings.Trim(v, `"`)
			}
		}
	}
	return s
}

// splitLabels splits `a="x y" b=z` on the spaces outside quotes.
func splitLabels(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// The offline image (Msgbridge, built by hack/e2e-images.sh) and the
// Dockerfile describe the same image: the same base content, user,
// entrypoint, programs and labels, and programs built the same way.
func TestOfflineImageMatchesDockerfile(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	docker := parseDockerfile(t, string(text))
	layout := Msgbridge("/out/manager", "/out/bridge", CABundle, "${VERSION}")

	if docker.from != distrolessBase {
		t.Errorf("the Dockerfile's base is %s; image.Base copies %s's content: update it", docker.from, distrolessBase)
	}
	if docker.user != layout.User {
		t.Errorf("USER %s, the offline image runs as %s", docker.user, layout.User)
	}
	if !reflect.DeepEqual(docker.entrypoint, layout.Entrypoint) {
		t.Errorf("ENTRYPOINT %v, the offline image's %v", docker.entrypoint, layout.Entrypoint)
	}
	base := map[string]bool{}
	for _, f := range Base(CABundle) {
		base[f.Path] = true
	}
	programs := map[string]string{}
	for _, f := range layout.Files {
		if !base[f.Path] {
			programs[f.Path] = f.Source
		}
	}
	if !reflect.DeepEqual(docker.copies, programs) {
		t.Errorf("the Dockerfile copies %v, the offline image adds %v", docker.copies, programs)
	}
	if !reflect.DeepEqual(docker.labels, layout.Labels) {
		t.Errorf("LABEL %v, the offline image's %v", docker.labels, layout.Labels)
	}
	checkUser(t, layout)
	checkBuildFlags(t, string(text))
}

// checkUser: the user has an /etc/passwd entry and its home exists, as in
// distroless.
func checkUser(t *testing.T, l Layout) {
	t.Helper()
	uid, _, _ := strings.Cut(l.User, ":")
	paths := map[string]File{}
	for _, f := range l.Files {
		paths[f.Path] = f
	}
	for _, line := range strings.Split(string(paths["/etc/passwd"].Data), "\n") {
		fields := strings.Split(line, ":")
		if len(fields) == 7 && fields[2] == uid {
			if home, ok := paths[fields[5]]; !ok || !home.Mode.IsDir() || home.UID != NonRoot {
				t.Errorf("the home %s of uid %s is not in the image, owned by it", fields[5], uid)
			}
			return
		}
	}
	t.Errorf("uid %s has no /etc/passwd entry", uid)
}

// checkBuildFlags: hack/e2e-images.sh builds the programs with the
// Dockerfile's flags: static, -trimpath, stripped, the version stamped.
func checkBuildFlags(t *testing.T, dockerfile string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(repoRoot, "hack", "e2e-images.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"CGO_ENABLED=0", "go build -trimpath", `-s -w -X github.com/msgbridge/msgbridge/contract.Version=`} {
		for name, text := range map[string]string{"Dockerfile": dockerfile, "hack/e2e-images.sh": string(script)} {
			if !strings.Contains(text, flag) {
				t.Errorf("%s lacks %q", name, flag)
			}
		}
	}
}

func TestParseDockerfile(t *testing.T) {
	s := parseDockerfile(t, `FROM golang:1 AS build
RUN go build \
    -o /out/x .
# a comment
FROM example.com/base:tag
LABEL a="one two" \
      b="three"
COPY --from=build /out/x /x
USER 1:2
ENTRYPOINT ["/x", "-v"]
`)
	want := finalStage{
		from: "example.com/base:tag", user: "1:2", entrypoint: []string{"/x", "-v"},
		copies: map[string]string{"/x": "/out/x"}, labels: map[string]string{"a": "one two", "b": "three"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	labels := splitLabels(`k="a b" c=d`)
	sort.Strings(labels)
	if !reflect.DeepEqual(labels, []string{`c=d`, `k="a b"`}) {
		t.Errorf("splitLabels: %q", labels)
	}
}
