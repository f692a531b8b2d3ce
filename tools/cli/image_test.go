package cli

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/svclab/svclab/internal/ociimage"
	"github.com/svclab/svclab/internal/ociimage/ocitest"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// runImage runs `svclab ARGS…` (the root, as a user types it) and returns
// its stdout and stderr apart. The docker config is an empty directory.
func runImage(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

// imageBinaries are a static svclab and conformance binary (small ELF
// files) as --svclab-binary and --conformance-binary.
func imageBinaries(t *testing.T, interp string) []string {
	t.Helper()
	dir := t.TempDir()
	svclab, conformance := filepath.Join(dir, "svclab"), filepath.Join(dir, cmdline.Binary)
	ocitest.WriteELF(t, svclab, ocitest.Machine(t), interp, []byte("svclab"))
	ocitest.WriteELF(t, conformance, ocitest.Machine(t), "", []byte("conformance"))
	return []string{"--svclab-binary", svclab, "--conformance-binary", conformance}
}

// TestImagePathsAreTheSuites: the image holds the conformance binary
// under the name the suite's command line gives it.
func TestImagePathsAreTheSuites(t *testing.T) {
	if ociimage.ConformancePath != "/"+cmdline.Binary {
		t.Errorf("the image's conformance binary %s, the suite's %s", ociimage.ConformancePath, cmdline.Binary)
	}
}

// TestImagePush: stdout is the digest-pinned reference alone, which
// pulls the image from the registry; progress is on stderr.
func TestImagePush(t *testing.T) {
	host := ocitest.Registry(t)
	stdout, stderr, err := runImage(t, append([]string{"image", "push", host + "/team/svclab:v1"}, imageBinaries(t, "")...)...)
	if err != nil {
		t.Fatalf("image push: %v (stderr %q)", err, stderr)
	}
	want := regexp.MustCompile(`^` + regexp.QuoteMeta(host) + `/team/svclab@sha256:[0-9a-f]{64}\n$`)
	if !want.MatchString(stdout) {
		t.Fatalf("stdout %q, want one line matching %s", stdout, want)
	}
	if !strings.Contains(stderr, "pushed "+host+"/team/svclab:v1") {
		t.Errorf("stderr %q: no progress", stderr)
	}
	ref, err := name.NewDigest(strings.TrimSpace(stdout))
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	if d, err := img.Digest(); err != nil || d.String() != ref.DigestStr() {
		t.Errorf("pulled %s (%v), want %s", d, err, ref.DigestStr())
	}
}

// TestImagePushBadInput: a registry that refuses, a digest as the target,
// a dynamically linked binary: each one error saying what to do.
func TestImagePushBadInput(t *testing.T) {
	refusing := ocitest.RefusingRegistry(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{append([]string{"image", "push", refusing + "/team/svclab"}, imageBinaries(t, "")...), []string{"registry " + refusing + " refused", "docker login " + refusing}},
		{append([]string{"image", "push", refusing + "/svclab@sha256:" + strings.Repeat("0", 64)}, imageBinaries(t, "")...), []string{"has a digest"}},
		{append([]string{"image", "push", refusing + "/svclab"}, imageBinaries(t, "/lib64/ld-linux-x86-64.so.2")...), []string{"dynamically linked", "CGO_ENABLED=0"}},
		{[]string{"image", "push"}, []string{"accepts 1 arg"}},
	} {
		stdout, _, err := runImage(t, c.args...)
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", c.args, err, w)
			}
		}
		if stdout != "" {
			t.Errorf("%v: stdout %q, want nothing", c.args, stdout)
		}
	}
}

// TestImageBuild: an archive and a layout of the same binaries print the
// same digest, alone on stdout; without a destination, or with two, the
// command says what to give.
func TestImageBuild(t *testing.T) {
	bins := imageBinaries(t, "")
	dir := t.TempDir()
	archive, _, err := runImage(t, append([]string{"image", "build", "--output", filepath.Join(dir, "svclab.tar")}, bins...)...)
	if err != nil {
		t.Fatalf("image build --output: %v", err)
	}
	layout, _, err := runImage(t, append([]string{"image", "build", "--layout", filepath.Join(dir, "oci"), "--tag", "registry.example/svclab:v1"}, bins...)...)
	if err != nil {
		t.Fatalf("image build --layout: %v", err)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}\n$`).MatchString(archive) || archive != layout {
		t.Errorf("stdout %q (archive) and %q (layout), want the same digest alone", archive, layout)
	}
	for _, args := range [][]string{
		{"image", "build"},
		{"image", "build", "--output", filepath.Join(dir, "a.tar"), "--layout", filepath.Join(dir, "b")},
	} {
		if _, _, err := runImage(t, append(args, bins...)...); err == nil || !strings.Contains(err.Error(), "--output") || !strings.Contains(err.Error(), "--layout") {
			t.Errorf("%v: %v, want an error naming --output and --layout", args, err)
		}
	}
}
