package vm

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// KernelHasIPVS tells whether the host's running kernel can do IPVS, only
// by looking (it loads nothing): ip_vs is loaded (/proc/net/ip_vs,
// /sys/module/ip_vs), built in (modules.builtin), or a module that can be
// loaded (in modules.dep, and module loading not disabled). When it is
// false, callers run their IPVS tests in the VM (Run).
// CLI: test -e /proc/net/ip_vs || grep -q /ip_vs.ko /lib/modules/$(uname -r)/modules.{builtin,dep}
func KernelHasIPVS() bool {
	for _, p := range []string{"/proc/net/ip_vs", "/sys/module/ip_vs"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	var uts syscall.Utsname
	if syscall.Uname(&uts) != nil {
		return false
	}
	var b strings.Builder
	for _, c := range uts.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	dir := filepath.Join("/lib/modules", b.String())
	if listsModule(filepath.Join(dir, "modules.builtin"), "ip_vs") {
		return true
	}
	if data, err := os.ReadFile("/proc/sys/kernel/modules_disabled"); err == nil && strings.TrimSpace(string(data)) != "0" {
		return false
	}
	if _, err := os.Stat("/proc/modules"); err != nil {
		return false // a kernel without module support
	}
	return listsModule(filepath.Join(dir, "modules.dep"), "ip_vs")
}

// listsModule tells whether a modules.dep or modules.builtin file has a
// line for the module name.
func listsModule(file, name string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		mod, _, _ := strings.Cut(s.Text(), ":")
		if moduleName(strings.TrimSpace(mod)) == name {
			return true
		}
	}
	return false
}
