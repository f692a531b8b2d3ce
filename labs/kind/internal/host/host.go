package host

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// capSysResource is CAP_SYS_RESOURCE's bit in the capability sets.
const capSysResource = 24

// HasCapSysResource reports whether CAP_SYS_RESOURCE is in this process's
// bounding set. Some VMs and sandboxes lack it entirely: then a
// --privileged container (which asks for every capability) cannot start
// with a stock runc, and no process may lower its oom_score_adj.
func HasCapSysResource() bool {
	set, ok := capabilitySet("CapBnd")
	if !ok {
		return true // cannot tell: assume a normal machine
	}
	return set&(1<<capSysResource) != 0
}

func capabilitySet(name string) (uint64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && k == name {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// CgroupV2 reports whether /sys/fs/cgroup is the unified (v2) hierarchy.
// On a v1 host kubelet ≥ 1.35 refuses to start unless failCgroupV1: false.
func CgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// Quirks is what the build and the clusters must work around.
type Quirks struct {
	// NoCapSysResource: containers need the svclab-runc wrapper runtime,
	// negative oom_score_adj must be avoided (dockerd, containerd, systemd).
	NoCapSysResource bool
	// CgroupV1: kubelet needs failCgroupV1: false.
	CgroupV1 bool
}

// Detect looks at the running machine.
func Detect() Quirks {
	return Quirks{NoCapSysResource: !HasCapSysResource(), CgroupV1: !CgroupV2()}
}

// String is a stable description, used in cache keys.
func (q Quirks) String() string {
	var s []string
	if q.NoCapSysResource {
		s = append(s, "no-cap-sys-resource")
	}
	if q.CgroupV1 {
		s = append(s, "cgroup-v1")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}
