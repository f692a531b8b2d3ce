package nodeimage

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestImageTarNamesEveryPathOnce(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.tar")
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, d := range []string{"./", "./tmp/", "./usr/", "./usr/bin/", "./etc/"} {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755})
	}
	tw.Close()
	os.WriteFile(base, b.Bytes(), 0o644)
	bin := filepath.Join(dir, "kubeadm")
	os.WriteFile(bin, []byte("x"), 0o755)
	var out bytes.Buffer
	if err := writeImageTar(&out, []layer{{Tar: base}, {Path: "/usr/bin/kubeadm", Source: bin, Mode: 0o755}, {Path: "/kind/version", Content: "v1"}}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[h.Name] {
			t.Errorf("%s appears twice", h.Name)
		}
		seen[h.Name] = true
	}
	for _, want := range []string{"usr/bin/kubeadm", "kind/", "kind/version", "tmp/"} {
		if !seen[want] {
			t.Errorf("no %s in %v", want, seen)
		}
	}
}
