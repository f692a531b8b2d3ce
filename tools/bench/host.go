package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/tools/bench/report"
)

// unsupported says why this host cannot measure a mode.
func unsupported(m Mode) string {
	if m.ProxyMode == "ipvs" && !hasIPVS() {
		return "ipvs: needs IPVS (this kernel lacks it; run under `svclab vm run`)"
	}
	if m.ProxyMode == "ipvs" {
		if err := hostprog.Check(hostprog.IPVSAdm); err != nil {
			return "ipvs: the probe needs ipvsadm: " + err.Error()
		}
	}
	return ""
}

// hasIPVS reports whether the kernel has IPVS loaded, built in or as a
// module the lab's proxy can load.
func hasIPVS() bool {
	if _, err := os.Stat("/proc/net/ip_vs"); err == nil {
		return true
	}
	if _, err := os.Stat("/sys/module/ip_vs"); err == nil {
		return true
	}
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	mods, _ := filepath.Glob(filepath.Join("/lib/modules", strings.TrimSpace(string(rel)), "kernel/net/netfilter/ipvs/ip_vs.ko*"))
	return len(mods) > 0
}

// notImplemented turns a proxy that refuses the mode into a skip.
func notImplemented(m Mode, err error) string {
	if strings.Contains(err.Error(), "not implemented by svclab") {
		return fmt.Sprintf("%s: svclab's proxy does not implement mode %q yet (its log: not implemented by svclab yet)", m.Name, m.ProxyMode)
	}
	return ""
}

func machine() report.Machine {
	m := report.Machine{CPUs: runtime.NumCPU()}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(rel))
	}
	m.IPTables = iptablesVersion()
	return m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// iptablesVersion is `iptables -V` of the host (its backend in
// parentheses), empty when it does not run.
func iptablesVersion() string {
	out, err := exec.Command(hostprog.IPTables, "-V").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
