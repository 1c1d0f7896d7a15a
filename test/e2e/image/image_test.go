package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// archive is a docker-archive read back: its manifest, config and layer.
type archive struct {
	manifest []manifestEntry
	config   config
	files    map[string]*tar.Header
	data     map[string][]byte
}

func readArchive(t *testing.T, b []byte) archive {
	t.Helper()
	entries := untar(t, b)
	var a archive
	if err := json.Unmarshal(entries["manifest.json"].data, &a.manifest); err != nil || len(a.manifest) != 1 {
		t.Fatalf("manifest.json: %v %s", err, entries["manifest.json"].data)
	}
	if err := json.Unmarshal(entries[a.manifest[0].Config].data, &a.config); err != nil {
		t.Fatalf("config: %v", err)
	}
	layer := untar(t, entries[a.manifest[0].Layers[0]].data)
	a.files, a.data = map[string]*tar.Header{}, map[string][]byte{}
	for name, e := range layer {
		a.files[name], a.data[name] = e.header, e.data
	}
	return a
}

type tarEntry struct {
	header *tar.Header
	data   []byte
}

func untar(t *testing.T, b []byte) map[string]tarEntry {
	t.Helper()
	out := map[string]tarEntry{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = tarEntry{h, data}
	}
}

func TestMsgbridgeArchive(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"manager", "bridge", "ca.crt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+" content"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	layout := Msgbridge(filepath.Join(dir, "manager"), filepath.Join(dir, "bridge"), filepath.Join(dir, "ca.crt"), "v1.2.3")
	var buf bytes.Buffer
	if err := WriteDockerArchive(&buf, "localhost/msgbridge:e2e", layout); err != nil {
		t.Fatal(err)
	}
	a := readArchive(t, buf.Bytes())

	if got := a.manifest[0].RepoTags; !reflect.DeepEqual(got, []string{"localhost/msgbridge:e2e"}) {
		t.Errorf("RepoTags %v", got)
	}
	if a.config.Config.User != "65532:65532" || !reflect.DeepEqual(a.config.Config.Entrypoint, []string{"/manager"}) {
		t.Errorf("runs %v as %q", a.config.Config.Entrypoint, a.config.Config.User)
	}
	if a.config.OS != "linux" || a.config.Architecture != "amd64" || len(a.config.RootFS.DiffIDs) != 1 {
		t.Errorf("config %+v", a.config)
	}
	for _, want := range []struct {
		name     string
		mode     int64
		uid      int
		typeflag byte
		data     string
	}{
		{"manager", 0o755, 0, tar.TypeReg, "manager content"},
		{"bridge", 0o755, 0, tar.TypeReg, "bridge content"},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, 0, tar.TypeReg, "ca.crt content"},
		{"etc/ssl/", 0o755, 0, tar.TypeDir, ""}, // a parent the layout does not list
		{"etc/passwd", 0o644, 0, tar.TypeReg, distrolessPasswd},
		{"home/nonroot/", 0o700, NonRoot, tar.TypeDir, ""},
		{"tmp/", 0o1777, 0, tar.TypeDir, ""},
	} {
		h := a.files[want.name]
		if h == nil {
			t.Errorf("%s missing; files %v", want.name, keys(a.files))
			continue
		}
		if h.Mode != want.mode || h.Uid != want.uid || h.Gid != want.uid || h.Typeflag != want.typeflag || string(a.data[want.name]) != want.data {
			t.Errorf("%s: mode %o uid %d gid %d type %c data %q", want.name, h.Mode, h.Uid, h.Gid, h.Typeflag, a.data[want.name])
		}
	}

	// The same inputs give the same image, byte for byte.
	var again bytes.Buffer
	if err := WriteDockerArchive(&again, "localhost/msgbridge:e2e", layout); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two archives of the same layout differ")
	}
}

func TestLayoutErrors(t *testing.T) {
	for name, l := range map[string]Layout{
		"no user":       {Entrypoint: []string{"/x"}},
		"no entrypoint": {User: "1:1"},
		"relative path": {User: "1:1", Entrypoint: []string{"/x"}, Files: []File{{Path: "x", Data: []byte("x")}}},
		"unclean path":  {User: "1:1", Entrypoint: []string{"/x"}, Files: []File{{Path: "/a/../x"}}},
		"twice":         {User: "1:1", Entrypoint: []string{"/x"}, Files: []File{{Path: "/x"}, {Path: "/x"}}},
		"missing file":  {User: "1:1", Entrypoint: []string{"/x"}, Files: []File{{Path: "/x", Source: "/nonexistent/x"}}},
	} {
		if err := WriteDockerArchive(io.Discard, "x:y", l); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestProgramLayout(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "coredns")
	if err := os.WriteFile(bin, []byte("elf"), 0o600); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDockerArchive(&buf, "localhost/coredns:e2e", Program("coredns", bin, "65532:65532")); err != nil {
		t.Fatal(err)
	}
	a := readArchive(t, buf.Bytes())
	if h := a.files["coredns"]; h == nil || fs.FileMode(h.Mode) != 0o755 || string(a.data["coredns"]) != "elf" {
		t.Errorf("coredns: %+v", h)
	}
	if !reflect.DeepEqual(a.config.Config.Entrypoint, []string{"/coredns"}) {
		t.Errorf("entrypoint %v", a.config.Config.Entrypoint)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
