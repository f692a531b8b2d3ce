package network

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolvConfFiles: a lab's files are written one level below the
// directory, removed by host or all at once by the lab's name, and the
// files of a lab whose name shares the prefix, or of nobody, stay. Lab "a"
// with host "b-x" and lab "a-b" with host "x" have directories of their own.
// Files named as an older svclab named them (svclab-<lab>-<host>) go with
// their lab when their header names it.
func TestResolvConfFiles(t *testing.T) {
	root := t.TempDir()
	body := []byte("nameserver 10.96.0.10\n")
	for _, w := range []struct{ lab, host string }{{"a", "node1"}, {"a", "b-x"}, {"a-b", "x"}, {"a-b", "node1"}, {"a", "web-v2.0.1-abc12"}} {
		if err := writeResolvConf(root, w.lab, w.host, body); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(root, "svclab-a.node1", "resolv.conf"))
	if err != nil || string(got) != "# svclab lab=a\nnameserver 10.96.0.10\n" {
		t.Fatalf("svclab-a.node1/resolv.conf: %q %v", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "svclab-a-b.x", "resolv.conf")); err != nil || !strings.HasPrefix(string(got), "# svclab lab=a-b\n") {
		t.Fatalf("svclab-a-b.x/resolv.conf: %q %v", got, err)
	}
	for dir, data := range map[string]string{
		"svclab-a.manual": "nameserver 1.1.1.1\n",                 // not svclab's
		"svclab-a-old":    "# svclab lab=a\nnameserver 1.1.1.1\n", // lab a's, named as before
		"svclab-a-b-old":  "# svclab lab=a-b\nnameserver 1.1.1.1\n",
	} {
		os.Mkdir(filepath.Join(root, dir), 0o755)
		os.WriteFile(filepath.Join(root, dir, "resolv.conf"), []byte(data), 0o644)
	}

	if err := removeResolvConf(root, "a", "node1"); err != nil {
		t.Fatal(err)
	}
	if err := removeResolvConfs(root, "a"); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"svclab-a-b-old", "svclab-a-b.node1", "svclab-a-b.x", "svclab-a.manual"}
	if len(left) != len(want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	for i := range want {
		if left[i] != want[i] {
			t.Fatalf("left %v, want %v", left, want)
		}
	}
	if err := removeResolvConfs(root, "a"); err != nil {
		t.Errorf("second removal: %v", err)
	}
}

// TestResolvConfConfined: names that are not labels never become paths.
func TestResolvConfConfined(t *testing.T) {
	root := t.TempDir()
	for _, bad := range []struct{ lab, host string }{{"..", "x"}, {"a", "../../etc"}, {"a", ".."}, {"a", "."}, {"a", "x/y"}, {"a/b", "x"}, {"a", ""}, {"", "x"}, {"a", strings.Repeat("x", 64)}} {
		if err := writeResolvConf(root, bad.lab, bad.host, nil); err == nil {
			t.Errorf("lab %q host %q: written", bad.lab, bad.host)
		}
	}
	if err := removeResolvConfs(root, "../x"); err == nil {
		t.Error("removing the files of lab ../x succeeded")
	}
	// A symlink planted as a lab host's directory does not lead the write out.
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "svclab-a.evil")); err != nil {
		t.Fatal(err)
	}
	if err := writeResolvConf(root, "a", "evil", []byte("x")); err == nil {
		t.Error("write through a symlinked directory succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the write escaped to %s: %v", outside, entries)
	}
}
