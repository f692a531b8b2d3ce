package vm

import (
	"reflect"
	"testing"
)

const simulation = `NOTE: This is only a simulation!
Reading package lists...
Inst libc6 (2.36-9+deb12u14 Debian:12.11/stable, Debian-Security:12/stable-security [amd64])
Inst ipvsadm [1:1.31-1] (1:1.31-1+b1 Debian:12.11/stable [amd64])
Inst linux-image-6.1.0-56-amd64 (6.1.192-2 Debian-Security:12/stable-security [amd64])
Conf libc6 (2.36-9+deb12u14 Debian:12.11/stable [amd64])
`

func TestParseSimulation(t *testing.T) {
	got := parseSimulation(simulation)
	want := []pkg{{"ipvsadm", "1:1.31-1+b1"}, {"libc6", "2.36-9+deb12u14"}, {"linux-image-6.1.0-56-amd64", "6.1.192-2"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestBuildKey(t *testing.T) {
	kernel := pkg{"linux-image-6.1.0-56-amd64", "6.1.192-2"}
	a := buildKey(kernel, []pkg{{"libc6", "1"}, kernel})
	if a != buildKey(kernel, []pkg{{"libc6", "1"}, kernel}) {
		t.Fatal("the key is stable")
	}
	if a == buildKey(kernel, []pkg{{"libc6", "2"}, kernel}) {
		t.Fatal("another package version is another build")
	}
	if want := "6.1.0-56-amd64-"; a[:len(want)] != want || len(a) != len(want)+12 {
		t.Fatalf("key %q: want the kernel version and 12 hex digits", a)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "/usr/bin:x": "/usr/bin:x"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
