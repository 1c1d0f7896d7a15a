// Package image writes container images without a container engine: a
// layout (files, user, entrypoint) becomes a one-layer image in the
// docker-archive format that `ctr images import` loads. The end-to-end
// cluster runs the project's image built this way, because the Dockerfile's
// base images cannot be pulled on the machines that run the tests; a test
// checks that both describe the same image (dockerfile_test.go).
package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// File is one entry of an image's file system.
type File struct {
	// Path is absolute, e.g. /etc/passwd.
	Path string
	// Mode holds the permission bits and, for directories, fs.ModeDir
	// (plus fs.ModeSticky for /tmp).
	Mode fs.FileMode
	// UID and GID own the entry.
	UID, GID int
	// Data is a regular file's content, unless Source names a file on this
	// machine to copy.
	Data   []byte
	Source string
}

// Layout is a whole image: its files and how it runs.
type Layout struct {
	Files []File
	// User runs the entrypoint, "uid:gid".
	User       string
	Entrypoint []string
	Env        []string
	Labels     map[string]string
}

// created is every image's creation time and every file's modification
// time, so that the same inputs give the same image.
var created = time.Unix(0, 0).UTC()

// config is the part of the OCI image configuration a runtime reads.
type config struct {
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Created      time.Time     `json:"created"`
	Config       runConfig     `json:"config"`
	RootFS       rootFS        `json:"rootfs"`
	History      []historyItem `json:"history"`
}

type runConfig struct {
	User       string            `json:"User,omitempty"`
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type historyItem struct {
	Created   time.Time `json:"created"`
	CreatedBy string    `json:"created_by"`
}

// manifestEntry is one image of a docker-archive's manifest.json.
type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// WriteDockerArchive writes l as the image ref (e.g. localhost/msgbridge:e2e)
// in the docker-archive format to w.
func WriteDockerArchive(w io.Writer, ref string, l Layout) error {
	if l.User == "" || len(l.Entrypoint) == 0 {
		return errors.New("image: a layout needs a user and an entrypoint")
	}
	layer, err := Layer(l.Files)
	if err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer)
	layerID := hex.EncodeToString(layerSum[:])
	cfg, err := json.Marshal(config{
		Architecture: "amd64",
		OS:           "linux",
		Created:      created,
		Config:       runConfig{User: l.User, Entrypoint: l.Entrypoint, Env: l.Env, WorkingDir: "/", Labels: l.Labels},
		RootFS:       rootFS{Type: "layers", DiffIDs: []string{"sha256:" + layerID}},
		History:      []historyItem{{Created: created, CreatedBy: "github.com/msgbridge/msgbridge/test/e2e/image"}},
	})
	if err != nil {
		return err
	}
	cfgSum := sha256.Sum256(cfg)
	cfgName := hex.EncodeToString(cfgSum[:]) + ".json"
	layerName := layerID + "/layer.tar"
	manifest, err := json.Marshal([]manifestEntry{{Config: cfgName, RepoTags: []string{ref}, Layers: []string{layerName}}})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{{layerName, layer}, {cfgName, cfg}, {"manifest.json", manifest}} {
		if err := writeEntry(tw, File{Path: "/" + e.name, Mode: 0o644, Data: e.data}, e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Layer is the tar of files, with every parent directory that the layout
// does not list itself added (root:root, 0755), sorted by path.
func Layer(files []File) ([]byte, error) {
	all := map[string]File{}
	for _, f := range files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("image: path %q must be absolute and clean", f.Path)
		}
		if _, dup := all[f.Path]; dup {
			return nil, fmt.Errorf("image: %s listed twice", f.Path)
		}
		all[f.Path] = f
	}
	for _, f := range files {
		for dir := path.Dir(f.Path); dir != "/"; dir = path.Dir(dir) {
			if _, ok := all[dir]; !ok {
				all[dir] = File{Path: dir, Mode: fs.ModeDir | 0o755}
			}
		}
	}
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := all[p]
		data, err := content(f)
		if err != nil {
			return nil, err
		}
		if err := writeEntry(tw, f, data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func content(f File) ([]byte, error) {
	if f.Mode.IsDir() || f.Source == "" {
		return f.Data, nil
	}
	data, err := os.ReadFile(f.Source)
	if err != nil {
		return nil, fmt.Errorf("image: %s: %w", f.Path, err)
	}
	return data, nil
}

func writeEntry(tw *tar.Writer, f File, data []byte) error {
	h := &tar.Header{
		Name:    strings.TrimPrefix(f.Path, "/"),
		Mode:    int64(f.Mode.Perm()),
		Uid:     f.UID,
		Gid:     f.GID,
		ModTime: created,
		Format:  tar.FormatPAX,
	}
	if f.Mode&fs.ModeSticky != 0 {
		h.Mode |= 0o1000
	}
	if f.Mode.IsDir() {
		h.Typeflag = tar.TypeDir
		h.Name += "/"
	} else {
		h.Typeflag = tar.TypeReg
		h.Size = int64(len(data))
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}
