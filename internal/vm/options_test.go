package vm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveShares(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	shares, guests, err := resolveShares([]Share{
		{HostPath: a, GuestPath: "/work/deep/er"},
		{HostPath: b, GuestPath: "/work/", ReadOnly: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	// parents first, so that /work/deep/er is mounted on the /work share
	if guests[0] != "/work" || guests[1] != "/work/deep/er" || shares[0].Path != b || !shares[0].ReadOnly ||
		shares[0].Tag != "svclab.s0" || shares[1].Tag != "svclab.s1" {
		t.Fatalf("shares %+v, guest paths %v", shares, guests)
	}
	file := filepath.Join(a, "f")
	os.WriteFile(file, nil, 0o644)
	for _, bad := range []Share{
		{HostPath: filepath.Join(a, "missing"), GuestPath: "/x"},
		{HostPath: file, GuestPath: "/x"},
		{HostPath: a, GuestPath: "relative"},
		{HostPath: a, GuestPath: "/proc"},
		{HostPath: a, GuestPath: "/"},
		{HostPath: a, GuestPath: "/a\tb"},
	} {
		if _, _, err := resolveShares([]Share{bad}); err == nil {
			t.Errorf("share %+v: want an error", bad)
		}
	}
}

func TestGuestDir(t *testing.T) {
	host := t.TempDir()
	sub := filepath.Join(host, "pkg", "x")
	os.MkdirAll(sub, 0o755)
	t.Chdir(sub)
	shares := []share9p{{Path: "/nonexistent"}, {Path: host}, {Path: filepath.Join(host, "pkg")}}
	if got := guestDir(shares, []string{"/n", "/src", "/deep"}); got != "/deep/x" {
		t.Fatalf("got %s, want /deep/x (the deepest share holding the working directory)", got)
	}
	if got := guestDir(shares[:1], []string{"/n"}); got != "/root" {
		t.Fatalf("got %s, want /root", got)
	}
}

func TestFindBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "svclab")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(bin, link)
	if got, err := findBinary(link); err != nil || got != bin {
		t.Fatalf("findBinary(link) = %q, %v; want %s", got, err, bin)
	}
	if got, err := findBinary("-"); err != nil || got != "" {
		t.Fatalf(`findBinary("-") = %q, %v`, got, err)
	}
	t.Setenv("SVCLAB_BIN", bin)
	if got, err := findBinary(""); err != nil || got != bin {
		t.Fatalf("SVCLAB_BIN: %q, %v", got, err)
	}
	if _, err := findBinary(dir); err == nil || !strings.Contains(err.Error(), "not a file") {
		t.Fatalf("a directory: %v", err)
	}
}

func TestTailBuffer(t *testing.T) {
	var passed strings.Builder
	tb := &tailBuffer{max: 5, w: &passed}
	tb.Write([]byte("abc"))
	tb.Write([]byte("defg"))
	if tb.String() != "cdefg" || passed.String() != "abcdefg" {
		t.Fatalf("tail %q, passed %q", tb.String(), passed.String())
	}
	if got := lastLines("a\nb\nc\n", 2); got != "b\nc" {
		t.Fatalf("lastLines: %q", got)
	}
}
