package hostprog

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/cmdrun"
)

// fakeHost has the programs in have; its apt-get install adds the
// programs of the packages it installs.
type fakeHost struct {
	have map[string]bool
	ran  [][]string
	fail string // an argv prefix that fails
}

func (f *fakeHost) host(install bool, log *bytes.Buffer) *Host {
	h := &Host{
		LookPath: func(name string) (string, error) {
			if f.have[name] {
				return "/usr/bin/" + name, nil
			}
			return "", errors.New("not found")
		},
		Run: func(_ context.Context, env []string, argv ...string) (string, error) {
			f.ran = append(f.ran, argv)
			if !slices.Contains(env, "DEBIAN_FRONTEND=noninteractive") {
				return "", errors.New("apt-get run without DEBIAN_FRONTEND=noninteractive")
			}
			if f.fail != "" && strings.HasPrefix(strings.Join(argv, " "), f.fail) {
				return "E: Unable to locate package", errors.New("apt-get: exit status 100\nE: Unable to locate package")
			}
			if argv[1] == "install" {
				for _, p := range Programs {
					if slices.Contains(argv, p.Package) {
						f.have[p.Name] = true
					}
				}
			}
			return "", nil
		},
		Install: install,
	}
	if log != nil {
		h.Log = log
	}
	return h
}

func TestEnsureInstallsMissingPrograms(t *testing.T) {
	f := &fakeHost{have: map[string]bool{Docker: true, Tar: true}}
	var log bytes.Buffer
	pkgs, err := f.host(true, &log).Ensure(context.Background(), Debootstrap, Docker, Tar, Chroot, Debootstrap)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"debootstrap", "coreutils"}; !slices.Equal(pkgs, want) {
		t.Errorf("installed %v, want %v", pkgs, want)
	}
	// One update, then one install of every missing package.
	want := [][]string{
		{"apt-get", "update", "-q", "-o", "DPkg::Lock::Timeout=120"},
		{"apt-get", "install", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=120", "debootstrap", "coreutils"},
	}
	if !slices.EqualFunc(f.ran, want, slices.Equal) {
		t.Errorf("ran %q, want %q", f.ran, want)
	}
	if !strings.Contains(log.String(), "installing Debian packages on the host: debootstrap coreutils (for debootstrap chroot)") {
		t.Errorf("log: %q", log.String())
	}
}

func TestEnsureRunsNothingWhenAllArePresent(t *testing.T) {
	f := &fakeHost{have: map[string]bool{IP: true, IPTables: true}}
	pkgs, err := f.host(true, nil).Ensure(context.Background(), IP, IPTables)
	if err != nil || pkgs != nil || f.ran != nil {
		t.Errorf("Ensure = %v, %v; ran %q: want nothing done", pkgs, err, f.ran)
	}
}

func TestEnsureWithoutInstallingFailsAtOnceNamingProgramAndPackage(t *testing.T) {
	f := &fakeHost{have: map[string]bool{}}
	_, err := f.host(false, nil).Ensure(context.Background(), Debootstrap, QEMU)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"debootstrap (Debian package debootstrap, for " + string(Cluster) + ")",
		"qemu-system-x86_64 (Debian package qemu-system-x86", "apt-get install debootstrap qemu-system-x86"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f.ran != nil {
		t.Errorf("ran %q without installing allowed", f.ran)
	}
}

func TestEnsureInstallFailureKeepsAptOutput(t *testing.T) {
	f := &fakeHost{have: map[string]bool{}, fail: "apt-get install"}
	_, err := f.host(true, nil).Ensure(context.Background(), JQ)
	if err == nil || !strings.Contains(err.Error(), "jq (Debian package jq") || !strings.Contains(err.Error(), "Unable to locate package") {
		t.Errorf("error %v: want the program, its package and apt-get's output", err)
	}
}

func TestEnsureGoIsNotInstalledFromDebian(t *testing.T) {
	f := &fakeHost{have: map[string]bool{}}
	_, err := f.host(true, nil).Ensure(context.Background(), Go)
	if err == nil || !strings.Contains(err.Error(), "go not found") || f.ran != nil {
		t.Errorf("error %v, ran %q: want a clear error and no apt-get", err, f.ran)
	}
}

func TestEnsureRejectsUndeclaredPrograms(t *testing.T) {
	f := &fakeHost{have: map[string]bool{}}
	if _, err := f.host(true, nil).Ensure(context.Background(), "frobnicate"); err == nil || !strings.Contains(err.Error(), `"frobnicate" is not declared`) {
		t.Errorf("error %v", err)
	}
}

func TestProgramsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Programs {
		if seen[p.Name] {
			t.Errorf("%s declared twice", p.Name)
		}
		seen[p.Name] = true
		if p.Why == "" {
			t.Errorf("%s: no Why", p.Name)
		}
		if p.Package == "" && p.Name != Go {
			t.Errorf("%s: no Debian package", p.Name)
		}
	}
	for _, u := range []Use{Lab, Proxy, Workshop, Cluster, Flannel, VM, Test} {
		if len(Needs(u)) == 0 {
			t.Errorf("use %q needs nothing", u)
		}
	}
	if !slices.Contains(Needs(Cluster), Debootstrap) {
		t.Errorf("svclab create cluster does not check for debootstrap")
	}
}

// TestDefaultRunNamesTheFailedCommand: the real Host.Run (cmdrun) adds
// env and fails with a *cmdrun.Error that names the command and keeps its
// output.
func TestDefaultRunNamesTheFailedCommand(t *testing.T) {
	out, err := run(context.Background(), []string{"HOSTPROG_TEST=seen"}, "sh", "-c", "echo $HOSTPROG_TEST")
	if err != nil || out != "seen\n" {
		t.Fatalf("run = %q, %v; want the variable's value", out, err)
	}
	_, err = run(context.Background(), nil, "sh", "-c", "echo apt said no >&2; exit 100")
	var cerr *cmdrun.Error
	if !errors.As(err, &cerr) || !strings.Contains(err.Error(), "sh -c echo apt said no >&2; exit 100: exit status 100\napt said no") {
		t.Errorf("run's error = %v; want a *cmdrun.Error with the command and its output", err)
	}
}
