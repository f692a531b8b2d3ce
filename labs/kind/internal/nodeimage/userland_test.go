package nodeimage

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const testStatus = `Package: iptables
Status: install ok installed
Depends: libip4tc2 (>= 1.8.3), libxtables12 (= 1.8.9-2), netbase, libc6 (>= 2.34), libnftnl11 | libnftnl-dummy
Description: administration tools
 for packet filtering

Package: libxtables12
Status: install ok installed
Architecture: amd64
Depends: libc6:amd64 (>= 2.34)

Package: libip4tc2
Status: install ok installed
Pre-Depends: libc6

Package: netbase
Status: install ok installed

Package: libnftnl11
Status: install ok installed
Depends: libmnl0 (>= 1.0.3-4~), libc6

Package: libmnl0
Status: install ok installed

Package: libc6
Status: install ok installed
Depends: libgcc-s1

Package: libgcc-s1
Status: install ok installed
Depends: libc6

Package: removed
Status: deinstall ok config-files

Package: coreutils
Status: install ok installed
Pre-Depends: libselinux1, debconf | debconf-2.0

Package: cdebconf
Status: install ok installed
Provides: debconf-2.0, other (= 1)
`

func TestDependencyClosure(t *testing.T) {
	deps := dependencies(testStatus)
	got, err := closure(deps, []string{"iptables"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"iptables", "libc6", "libgcc-s1", "libip4tc2", "libmnl0", "libnftnl11", "libxtables12", "netbase"}
	if !slices.Equal(got, want) {
		t.Errorf("closure(iptables) = %v, want %v", got, want)
	}
	if _, ok := deps["removed"]; ok {
		t.Error("a package in config-files state counts as installed")
	}
	// coreutils depends on libselinux1, which nothing installed is or
	// provides: left out; debconf-2.0 is provided by cdebconf.
	if got, err := closure(deps, []string{"coreutils"}); err != nil || !slices.Equal(got, []string{"cdebconf", "coreutils"}) {
		t.Errorf("closure(coreutils) = %v, %v; want [cdebconf coreutils]", got, err)
	}
	if _, err := closure(deps, []string{"removed"}); err == nil {
		t.Error("closure of a package that is not installed: want an error")
	}
}

// rootfsTar writes a small merged-usr root filesystem as a tar, like the
// node's (entries "./…", top-level symlinks, alternatives).
func rootfsTar(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	dir := func(n string) { tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./" + n + "/", Mode: 0o755}) }
	sym := func(n, target string) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "./" + n, Linkname: target})
	}
	file := func(n, content string) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "./" + n, Mode: 0o755, Size: int64(len(content))})
		tw.Write([]byte(content))
	}
	dir(".")
	for _, d := range []string{"etc", "etc/alternatives", "tmp", "run", "usr", "usr/sbin", "usr/lib", "usr/lib/x86_64-linux-gnu", "usr/share", "usr/share/doc", "var", "var/lib", "var/lib/dpkg", "var/lib/dpkg/info", "home"} {
		dir(d)
	}
	sym("lib", "usr/lib")
	sym("sbin", "usr/sbin")
	file("usr/sbin/xtables-nft-multi", "ELF")
	sym("usr/sbin/iptables-nft", "xtables-nft-multi")
	sym("usr/sbin/iptables", "/etc/alternatives/iptables")
	sym("etc/alternatives/iptables", "/usr/sbin/iptables-nft")
	sym("usr/sbin/ebtables", "/etc/alternatives/ebtables")
	sym("etc/alternatives/ebtables", "/usr/sbin/ebtables-nft")
	file("usr/lib/x86_64-linux-gnu/libc.so.6", "libc")
	file("usr/sbin/other", "not in the closure")
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: "./usr/sbin/xtables-hard", Linkname: "./usr/sbin/xtables-nft-multi"})
	file("var/lib/dpkg/status", "Package: iptables\nStatus: install ok installed\nDepends: libc6\n\nPackage: libc6\nStatus: install ok installed\n\nPackage: other\nStatus: install ok installed\n")
	file("var/lib/dpkg/info/iptables.list", "/.\n/usr\n/usr/sbin\n/usr/sbin/xtables-nft-multi\n/usr/sbin/iptables-nft\n/usr/sbin/xtables-hard\n/usr/share/doc/iptables\n")
	file("var/lib/dpkg/info/libc6:amd64.list", "/.\n/lib\n/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu/libc.so.6\n")
	file("var/lib/dpkg/info/other.list", "/usr/sbin/other\n")
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rootfs.tar")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUserland(t *testing.T) {
	root := rootfsTar(t)
	out := filepath.Join(t.TempDir(), "userland.tar")
	pkgs, err := buildUserland(root, []string{"iptables"}, out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pkgs, []string{"iptables", "libc6"}) {
		t.Errorf("packages %v", pkgs)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
	}
	want := []string{
		"etc/", "etc/alternatives/", "tmp/", "run/", "usr/", "usr/sbin/", "usr/lib/", "usr/lib/x86_64-linux-gnu/", "usr/share/", "usr/share/doc/", "var/", "home/",
		"lib", "sbin",
		"usr/sbin/xtables-nft-multi", "usr/sbin/iptables-nft", "usr/sbin/iptables", "etc/alternatives/iptables",
		"usr/lib/x86_64-linux-gnu/libc.so.6", "usr/sbin/xtables-hard",
	}
	if !slices.Equal(names, want) {
		t.Errorf("userland entries\n got %q\nwant %q", names, want)
	}
}

func TestResolveTop(t *testing.T) {
	links := map[string]string{"lib": "usr/lib", "abs": "/usr/abs", "up": "../x"}
	for in, want := range map[string]string{
		"lib/x86_64-linux-gnu/libc.so.6": "usr/lib/x86_64-linux-gnu/libc.so.6",
		"lib":                            "lib",
		"abs/x":                          "abs/x",
		"up/x":                           "up/x",
		"usr/lib/x":                      "usr/lib/x",
	} {
		if got := resolveTop(links, in); got != want {
			t.Errorf("resolveTop(%q) = %q, want %q", in, got, want)
		}
	}
}
