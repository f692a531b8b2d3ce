package ociimage_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/svclab/svclab/internal/ociimage"
)

// TestWriteArchive: the archive reads back as docker load reads it (its
// manifest.json: under its name, the same configuration and layer) and
// as ctr images import reads it (its OCI layout: the same digest); a
// second archive of the same image is the same bytes; no temporary file
// is left.
func TestWriteArchive(t *testing.T) {
	img := build(t, binaries(t, "svclab", "conformance"))
	tag, err := ociimage.ParseTag("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "svclab.tar")
	if err := ociimage.WriteArchive(path, tag, img); err != nil {
		t.Fatalf("WriteArchive: %v", err)
	}
	back, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("reading %s back as %s: %v", path, tag, err)
	}
	checkConfig(t, back)
	if got, want := configName(t, back), configName(t, img); got != want {
		t.Errorf("docker's manifest.json: configuration %s, wrote %s", got, want)
	}
	if got, want := layerDigests(t, back), layerDigests(t, img); !slices.Equal(got, want) {
		t.Errorf("docker's manifest.json: layers %s, wrote %s", got, want)
	}
	unpacked := filepath.Join(t.TempDir(), "layout")
	untar(t, path, unpacked)
	index, err := layout.ImageIndexFromPath(unpacked)
	if err != nil {
		t.Fatalf("the archive as an OCI layout: %v", err)
	}
	m, err := index.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Digest != digest(t, img) {
		t.Errorf("the archive's index.json: %+v, %v; want the one image %s", m, err, digest(t, img))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want the archive alone", dir, len(entries))
	}
	again := filepath.Join(dir, "again.tar")
	if err := ociimage.WriteArchive(again, tag, img); err != nil {
		t.Fatal(err)
	}
	if a, b := fileBytes(t, path), fileBytes(t, again); !bytes.Equal(a, b) {
		t.Errorf("two archives of the same image differ (%d and %d bytes)", len(a), len(b))
	}
}

// TestWriteLayout: an OCI layout with one image, annotated with its name
// and platform; a directory that is not empty is refused.
func TestWriteLayout(t *testing.T) {
	img := build(t, binaries(t, "svclab", "conformance"))
	tag, err := ociimage.ParseTag("registry.example/team/svclab:v1")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	if err := ociimage.WriteLayout(dir, tag, img); err != nil {
		t.Fatalf("WriteLayout: %v", err)
	}
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%d images in the layout, want 1", len(m.Manifests))
	}
	d := m.Manifests[0]
	if d.Digest != digest(t, img) || d.Annotations["org.opencontainers.image.ref.name"] != "v1" ||
		d.Annotations["io.containerd.image.name"] != "registry.example/team/svclab:v1" || d.Platform == nil || d.Platform.OS != "linux" {
		t.Errorf("the layout's entry: %+v", d)
	}
	back, err := index.Image(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, back)

	err = ociimage.WriteLayout(dir, tag, img)
	if err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), dir) {
		t.Errorf("a second layout into %s: %v, want an error saying it is not empty", dir, err)
	}
}

// TestParseTag: the default name, a name, and a digest or malformed name
// refused.
func TestParseTag(t *testing.T) {
	if tag, err := ociimage.ParseTag(""); err != nil || tag.String() != ociimage.DefaultTag {
		t.Errorf(`ParseTag(""): %v, %v`, tag, err)
	}
	for _, bad := range []string{"svclab@sha256:" + hex, "UPPER/case", "a b"} {
		if _, err := ociimage.ParseTag(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseTag(%q): %v, want an error naming it", bad, err)
		}
	}
}

func configName(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func layerDigests(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var hs []v1.Hash
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return hs
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// untar unpacks the archive at path into dir (regular files and
// directories, names checked to stay inside).
func untar(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsLocal(hdr.Name) {
			t.Fatalf("archive entry %q leaves the directory", hdr.Name)
		}
		target := filepath.Join(dir, hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				var data []byte
				if data, err = io.ReadAll(io.LimitReader(tr, 1<<24)); err == nil {
					err = os.WriteFile(target, data, 0o644)
				}
			}
		default:
			t.Fatalf("archive entry %q of type %c", hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestContainerdName: the name a layout or archive gives containerd is
// the one the kubelet asks for (docker.io, library/).
func TestContainerdName(t *testing.T) {
	for ref, want := range map[string]string{
		"":                                     "docker.io/svclab/svclab-conformance:latest",
		"svclab":                               "docker.io/library/svclab:latest",
		"registry.example:5000/team/svclab:v1": "registry.example:5000/team/svclab:v1",
	} {
		tag, err := ociimage.ParseTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "layout")
		if err := ociimage.WriteLayout(dir, tag, build(t, binaries(t, "svclab", "conformance"))); err != nil {
			t.Fatal(err)
		}
		index, err := layout.ImageIndexFromPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := index.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Manifests[0].Annotations["io.containerd.image.name"]; got != want {
			t.Errorf("%q: containerd's name %q, want %q", ref, got, want)
		}
	}
}
