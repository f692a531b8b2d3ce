package kind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/hostprog"
)

// fakeHost has every program but debootstrap and records apt-get runs,
// whose install fails (so that Create stops there, whatever it would do
// next).
func fakeHost(t *testing.T, install bool) *[][]string {
	t.Helper()
	var ran [][]string
	hostprog.Override = &hostprog.Host{
		LookPath: func(name string) (string, error) {
			if name == hostprog.Debootstrap {
				return "", errors.New("not found")
			}
			return "/usr/bin/" + name, nil
		},
		Run: func(_ context.Context, _ []string, argv ...string) (string, error) {
			ran = append(ran, argv)
			if argv[1] == "install" {
				return "", errors.New("apt-get install: fake failure")
			}
			return "", nil
		},
		Install: install,
	}
	t.Cleanup(func() { hostprog.Override = nil })
	return &ran
}

func createArgs(t *testing.T) CreateOptions {
	bin := filepath.Join(t.TempDir(), "svclab")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return CreateOptions{ConfigFile: "../../clusters/kind/flannel-vxlan.yaml", SvclabBinary: bin}
}

// TestCreateChecksProgramsFirst: without debootstrap and with installing
// off, `svclab create cluster` fails at once naming it and its package,
// before it touches Docker or builds anything.
func TestCreateChecksProgramsFirst(t *testing.T) {
	ran := fakeHost(t, false)
	_, err := Create(context.Background(), createArgs(t))
	if err == nil || !strings.Contains(err.Error(), "debootstrap (Debian package debootstrap") {
		t.Fatalf("Create: %v; want the missing debootstrap named with its package", err)
	}
	if len(*ran) != 0 {
		t.Errorf("ran %q with installing off", *ran)
	}
}

// TestCreateInstallsMissingProgramsFirst: as root it installs debootstrap
// (one apt-get update, then apt-get install) before anything else; a
// failed install ends Create there.
func TestCreateInstallsMissingProgramsFirst(t *testing.T) {
	ran := fakeHost(t, true)
	_, err := Create(context.Background(), createArgs(t))
	if err == nil || !strings.Contains(err.Error(), "installing failed") {
		t.Fatalf("Create: %v; want the failed install", err)
	}
	if len(*ran) != 2 || !slices.Equal((*ran)[0][:2], []string{"apt-get", "update"}) ||
		!slices.Equal((*ran)[1][:2], []string{"apt-get", "install"}) || !slices.Contains((*ran)[1], "debootstrap") {
		t.Errorf("ran %q; want apt-get update, then apt-get install … debootstrap", *ran)
	}
}
