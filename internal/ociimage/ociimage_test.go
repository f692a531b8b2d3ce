package ociimage_test

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/svclab/svclab/internal/ociimage"
	"github.com/svclab/svclab/internal/ociimage/ocitest"
)

// binaries writes a static svclab and conformance binary (ELF files whose
// payloads are the given texts) into a new directory.
func binaries(t *testing.T, svclab, conformance string) ociimage.Binaries {
	t.Helper()
	dir := t.TempDir()
	b := ociimage.Binaries{Svclab: filepath.Join(dir, "svclab"), Conformance: filepath.Join(dir, "svclab-conformance.test")}
	ocitest.WriteELF(t, b.Svclab, ocitest.Machine(t), "", []byte(svclab))
	ocitest.WriteELF(t, b.Conformance, ocitest.Machine(t), "", []byte(conformance))
	return b
}

func build(t *testing.T, b ociimage.Binaries) *ociimage.Image {
	t.Helper()
	img, err := ociimage.Build(context.Background(), b)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestBuildIsReproducible: the same binaries, copied elsewhere at another
// time with another mode, give the same digest; another byte in one of
// them gives another.
func TestBuildIsReproducible(t *testing.T) {
	first := binaries(t, "svclab v1", "conformance v1")
	second := binaries(t, "svclab v1", "conformance v1")
	later := time.Now().Add(time.Hour)
	for _, p := range []string{second.Svclab, second.Conformance} {
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	a, b := digest(t, build(t, first)), digest(t, build(t, second))
	if a != b {
		t.Errorf("the same binaries: digests %s and %s", a, b)
	}
	if c := digest(t, build(t, binaries(t, "svclab v2", "conformance v1"))); c == a {
		t.Errorf("another svclab binary: the same digest %s", c)
	}
}

// TestBuildRefusesWhatCannotRun: a dynamically linked binary (the image
// has no C library), one for another architecture, a script, a directory,
// a device and a missing file — each refused in an error naming the file,
// and for the dynamic one, how to build a static one.
func TestBuildRefusesWhatCannotRun(t *testing.T) {
	good := binaries(t, "svclab", "conformance")
	dir := t.TempDir()
	dynamic := filepath.Join(dir, "dynamic")
	ocitest.WriteELF(t, dynamic, ocitest.Machine(t), "/lib64/ld-linux-x86-64.so.2", []byte("x"))
	foreign := filepath.Join(dir, "foreign")
	ocitest.WriteELF(t, foreign, elfForeignMachine(), "", []byte("x"))
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		b    ociimage.Binaries
		want []string
	}{
		{"dynamic svclab", ociimage.Binaries{Svclab: dynamic, Conformance: good.Conformance}, []string{"svclab binary", dynamic, "dynamically linked", "/lib64/ld-linux-x86-64.so.2", "CGO_ENABLED=0"}},
		{"dynamic conformance", ociimage.Binaries{Svclab: good.Svclab, Conformance: dynamic}, []string{"conformance test binary", dynamic, "CGO_ENABLED=0"}},
		{"other architecture", ociimage.Binaries{Svclab: foreign, Conformance: good.Conformance}, []string{foreign, "not for " + runtime.GOARCH}},
		{"script", ociimage.Binaries{Svclab: script, Conformance: good.Conformance}, []string{script, "not an ELF executable"}},
		{"directory", ociimage.Binaries{Svclab: dir, Conformance: good.Conformance}, []string{dir, "not a regular file"}},
		{"device", ociimage.Binaries{Svclab: os.DevNull, Conformance: good.Conformance}, []string{os.DevNull, "not a regular file"}},
		{"missing", ociimage.Binaries{Svclab: good.Svclab, Conformance: filepath.Join(dir, "missing")}, []string{"missing", "no such file"}},
		{"none", ociimage.Binaries{Svclab: good.Svclab}, []string{"conformance test binary", "no path given"}},
	} {
		img, err := ociimage.Build(context.Background(), c.b)
		if err == nil {
			img.Close()
			t.Errorf("%s: built", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}

// elfForeignMachine is a machine that is not this GOARCH's.
func elfForeignMachine() elf.Machine {
	if runtime.GOARCH == "s390x" {
		return elf.EM_X86_64
	}
	return elf.EM_S390
}

// TestPushAndPullBack: build, push to a registry served in this process,
// pull back by the digest reference Push printed: the one layer holds
// /tmp and both binaries (mode 0755, root's, dated the epoch, their
// bytes), the configuration runs /svclab on linux/GOARCH.
func TestPushAndPullBack(t *testing.T) {
	b := binaries(t, "the svclab binary", "the conformance binary")
	img := build(t, b)
	host := ocitest.Registry(t)
	tag, err := ociimage.ParsePushTarget(host+"/svclab/svclab:v1", false)
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	ref, err := ociimage.Push(context.Background(), tag, img, ociimage.PushOptions{Keychain: authn.NewMultiKeychain(), Progress: &progress})
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	if want := regexp.MustCompile(`^` + regexp.QuoteMeta(host) + `/svclab/svclab@sha256:[0-9a-f]{64}$`); !want.MatchString(ref) {
		t.Fatalf("Push returned %q, want %s", ref, want)
	}
	if !strings.Contains(progress.String(), "100% of") {
		t.Errorf("progress %q: no 100%% line", progress.String())
	}
	pinned, err := name.NewDigest(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(pinned)
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	if got, want := digest(t, pulled), digest(t, img); got != want {
		t.Errorf("pulled %s, pushed %s", got, want)
	}
	checkConfig(t, pulled)
	files := layerFiles(t, pulled)
	for path, source := range map[string]string{ociimage.SvclabPath: b.Svclab, ociimage.ConformancePath: b.Conformance} {
		f, ok := files[strings.TrimPrefix(path, "/")]
		if !ok {
			t.Errorf("the layer has no %s (it has %v)", path, keys(files))
			continue
		}
		want, err := os.ReadFile(source)
		if err != nil {
			t.Fatal(err)
		}
		if f.hdr.Typeflag != tar.TypeReg || f.hdr.Mode != 0o755 || f.hdr.Uid != 0 || f.hdr.Gid != 0 || !f.hdr.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: type %c mode %o owner %d/%d time %s, want a file, 0755, 0/0, the epoch", path, f.hdr.Typeflag, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, f.hdr.ModTime)
		}
		if !bytes.Equal(f.data, want) {
			t.Errorf("%s: %d bytes, not those of %s", path, len(f.data), source)
		}
	}
	if tmp, ok := files["tmp/"]; !ok || tmp.hdr.Mode != 0o1777 {
		t.Errorf("the layer's /tmp: %+v, want a directory of mode 1777", tmp)
	}
	// the tag was pushed too
	tagged, err := remote.Image(tag)
	if err != nil || digest(t, tagged) != digest(t, img) {
		t.Errorf("the tag %s: %v", tag, err)
	}
}

// checkConfig: linux/GOARCH, entrypoint /svclab, default argument netexec.
func checkConfig(t *testing.T, img v1.Image) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/svclab"}) || !slices.Equal(cfg.Config.Cmd, []string{"netexec"}) {
		t.Errorf("entrypoint %q cmd %q, want [/svclab] [netexec]", cfg.Config.Entrypoint, cfg.Config.Cmd)
	}
	if !cfg.Created.Time.Equal(time.Unix(0, 0)) {
		t.Errorf("created %s, want the epoch", cfg.Created)
	}
}

type layerFile struct {
	hdr  *tar.Header
	data []byte
}

// layerFiles reads the image's one layer (at most 1 MB of each file).
func layerFiles(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]layerFile{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(io.LimitReader(tr, 1<<20))
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = layerFile{hdr, data}
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestPushRefused: a registry answering 401 is one error, one line,
// naming the registry and `docker login`.
func TestPushRefused(t *testing.T) {
	img := build(t, binaries(t, "svclab", "conformance"))
	host := ocitest.RefusingRegistry(t)
	tag, err := ociimage.ParsePushTarget(host+"/team/svclab", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ociimage.Push(context.Background(), tag, img, ociimage.PushOptions{Keychain: authn.NewMultiKeychain()})
	if err == nil {
		t.Fatal("pushed to a registry that refuses everyone")
	}
	msg := err.Error()
	for _, want := range []string{"registry " + host + " refused", "401 Unauthorized", "docker login " + host} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("%q: more than one line", msg)
	}
}

// TestParsePushTarget: docker's defaults; a digest or a malformed name
// is refused.
func TestParsePushTarget(t *testing.T) {
	for ref, want := range map[string]string{
		"registry.example:5000/team/svclab":     "registry.example:5000/team/svclab:latest",
		"registry.example/team/svclab:v1":       "registry.example/team/svclab:v1",
		"team/svclab":                           "index.docker.io/team/svclab:latest",
		"registry.example/svclab@sha256:" + hex: "",
		"Registry.example/UPPER":                "",
		"":                                      "",
	} {
		tag, err := ociimage.ParsePushTarget(ref, false)
		switch {
		case want == "" && err == nil:
			t.Errorf("%q: accepted as %s", ref, tag.Name())
		case want != "" && err != nil:
			t.Errorf("%q: %v", ref, err)
		case want != "" && tag.Name() != want:
			t.Errorf("%q: %s, want %s", ref, tag.Name(), want)
		}
	}
}

const hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestBuildCancelled: a cancelled build fails with the context's error
// and leaves no temporary layer behind.
func TestBuildCancelled(t *testing.T) {
	b := binaries(t, "svclab", "conformance")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	img, err := ociimage.Build(ctx, b)
	if !errors.Is(err, context.Canceled) {
		if img != nil {
			img.Close()
		}
		t.Fatalf("Build with a cancelled context: %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("%s holds %v after a cancelled build", tmp, entries)
	}
}
