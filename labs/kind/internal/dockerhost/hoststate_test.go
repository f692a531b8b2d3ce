package dockerhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/internal/roottest"
)

// fakeHost is a /proc/sys tree of plain files, a state file and a
// /lib/modules in a temporary directory.
func fakeHost(t *testing.T, sysctls map[string]string) hostPaths {
	t.Helper()
	dir := t.TempDir()
	h := hostPaths{procSys: filepath.Join(dir, "proc", "sys"), stateFile: filepath.Join(dir, "state", "host-state.json"), libModules: filepath.Join(dir, "lib", "modules")}
	if err := os.MkdirAll(h.libModules, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.libModules, "6.1.0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range sysctls {
		setSysctl(t, h.procSys, k, v)
	}
	return h
}

func setSysctl(t *testing.T, root, key, value string) {
	t.Helper()
	path := filepath.Join(root, strings.ReplaceAll(key, ".", "/"))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sysctl(t *testing.T, root, key string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, strings.ReplaceAll(key, ".", "/")))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// TestStopRestoresOnlyWhatSvclabsContainersChanged plays finding 6 of the
// hardening issue on a fake /proc/sys: the administrator hardens the host
// while svclab's dockerd runs. Stopping it puts back the sysctls its
// containers changed (kubelet's kernel.panic, vm.overcommit_memory) and
// nothing else: not what the administrator set outside svclab's windows
// (fs.protected_symlinks, kernel.kptr_restrict, ip_forward=0), nor one
// svclab's containers changed and the administrator changed again since
// (rp_filter: the administrator's value stays).
func TestStopRestoresOnlyWhatSvclabsContainersChanged(t *testing.T) {
	h := fakeHost(t, map[string]string{
		"kernel.random.boot_id":       "boot-a",
		"kernel.panic":                "0",
		"vm.overcommit_memory":        "0",
		"net.ipv4.conf.all.rp_filter": "2",
		"fs.protected_symlinks":       "0",
		"kernel.kptr_restrict":        "0",
		"net.ipv4.ip_forward":         "1",
	})
	if err := h.begin(); err != nil {
		t.Fatal(err)
	}
	// a cluster is made: the nodes change three sysctls
	window := h.track()
	setSysctl(t, h.procSys, "kernel.panic", "10")
	setSysctl(t, h.procSys, "vm.overcommit_memory", "1")
	setSysctl(t, h.procSys, "net.ipv4.conf.all.rp_filter", "0")
	window.save(testWriter{t})
	// the administrator hardens the host meanwhile
	setSysctl(t, h.procSys, "fs.protected_symlinks", "1")
	setSysctl(t, h.procSys, "kernel.kptr_restrict", "2")
	setSysctl(t, h.procSys, "net.ipv4.ip_forward", "0")
	setSysctl(t, h.procSys, "net.ipv4.conf.all.rp_filter", "1")

	report, err := h.restore()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", strings.Join(report, "\n"))
	for k, want := range map[string]string{
		"kernel.panic":                "0", // svclab's, put back
		"vm.overcommit_memory":        "0", // svclab's, put back
		"net.ipv4.conf.all.rp_filter": "1", // the administrator's since
		"fs.protected_symlinks":       "1",
		"kernel.kptr_restrict":        "2",
		"net.ipv4.ip_forward":         "0",
	} {
		if got := sysctl(t, h.procSys, k); got != want {
			t.Errorf("%s = %s after stop, want %s", k, got, want)
		}
	}
	if !strings.Contains(strings.Join(report, "\n"), "left net.ipv4.conf.all.rp_filter=1") {
		t.Errorf("the report does not say rp_filter was left: %q", report)
	}
	if _, err := os.Stat(h.stateFile); !os.IsNotExist(err) {
		t.Errorf("the state file is still there after restore: %v", err)
	}
}

// TestStopIgnoresSysctlsSavedInAnotherBoot: the state survives a reboot
// (it is under /var/lib); after one, the saved changes are the old boot's
// and nothing of them is written back.
func TestStopIgnoresSysctlsSavedInAnotherBoot(t *testing.T) {
	h := fakeHost(t, map[string]string{"kernel.random.boot_id": "boot-a", "kernel.panic": "0", "vm.swappiness": "60"})
	if err := h.begin(); err != nil {
		t.Fatal(err)
	}
	window := h.track()
	setSysctl(t, h.procSys, "kernel.panic", "10")
	window.save(testWriter{t})
	stale := h.track()
	// reboot: a new boot id, the boot's own settings
	setSysctl(t, h.procSys, "kernel.random.boot_id", "boot-b")
	setSysctl(t, h.procSys, "kernel.panic", "10") // the new boot's sysctl.d says so

	// a window that began before the reboot records nothing after it
	setSysctl(t, h.procSys, "vm.swappiness", "10")
	stale.save(testWriter{t})
	if st, err := h.load(); err != nil || st.SysctlChanges["vm/swappiness"] != (sysctlChange{}) {
		t.Errorf("a window of another boot recorded a change: %+v, %v", st, err)
	}

	report, err := h.restore()
	if err != nil {
		t.Fatal(err)
	}
	if got := sysctl(t, h.procSys, "kernel.panic"); got != "10" {
		t.Errorf("kernel.panic = %s: a change saved in another boot was written back", got)
	}
	if got := sysctl(t, h.procSys, "vm.swappiness"); got != "10" {
		t.Errorf("vm.swappiness = %s, want 10", got)
	}
	if !strings.Contains(strings.Join(report, "\n"), "another boot") {
		t.Errorf("the report does not say the changes were ignored: %q", report)
	}
}

// TestIntegrationSysctlRestoreInAThrowawayNamespace runs the same on the
// kernel's own sysctls, net.* only, inside a network namespace made for
// the test on a locked thread (never the host's root namespace): the
// window's change is put back, the change made after it stays.
func TestIntegrationSysctlRestoreInAThrowawayNamespace(t *testing.T) {
	roottest.Require(t, "writes net.* sysctls in a throwaway network namespace")
	dir := t.TempDir()
	h := hostPaths{procSys: "/proc/sys", stateFile: filepath.Join(dir, "host-state.json"), libModules: dir}
	enter := func() error { return unix.Unshare(unix.CLONE_NEWNET) }
	err := nsthread.OnSwitchedThread(enter, func() error {
		read := func(key string) string {
			data, _ := os.ReadFile(filepath.Join(h.procSys, strings.ReplaceAll(key, ".", "/")))
			return strings.TrimSpace(string(data))
		}
		write := func(key, value string) error {
			return os.WriteFile(filepath.Join(h.procSys, strings.ReplaceAll(key, ".", "/")), []byte(value), 0o644)
		}
		forward, martians := "net.ipv4.ip_forward", "net.ipv4.conf.all.log_martians"
		forwardBefore, martiansBefore := read(forward), read(martians)
		if err := h.begin(); err != nil {
			return err
		}
		all, err := snapshotSysctls(h.procSys)
		if err != nil {
			return err
		}
		netOnly := map[string]string{} // nothing outside the namespace is ever written
		for k, v := range all {
			if strings.HasPrefix(k, "net/") {
				netOnly[k] = v
			}
		}
		window := &HostChanges{h: h, boot: bootID(h.procSys), before: netOnly}
		if err := write(forward, flip(forwardBefore)); err != nil {
			return err
		}
		window.save(testWriter{t})
		if err := write(martians, flip(martiansBefore)); err != nil { // after the window: not svclab's
			return err
		}
		report, err := h.restore()
		t.Logf("report: %q", report)
		if err != nil {
			return err
		}
		if got := read(forward); got != forwardBefore {
			t.Errorf("%s = %s after restore, want %s (svclab's change put back)", forward, got, forwardBefore)
		}
		if got := read(martians); got != flip(martiansBefore) {
			t.Errorf("%s = %s after restore, want %s (a change outside svclab's window stays)", martians, got, flip(martiansBefore))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func flip(v string) string {
	if v == "0" {
		return "1"
	}
	return "0"
}
