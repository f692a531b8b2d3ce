package workshop

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Requirements are what a step or exercise may require of the kernel
// (Step.Requires, Exercise.Requires):
//
//	ipvs   the IP Virtual Server (CONFIG_IP_VS, built in or as the ip_vs module)
//
// Many kernels (this project's CI machine's among them) have no IPVS; the
// IPVS parts of a lesson are then skipped, and `svclab vm run` is where
// they can be tried.
var Requirements = []string{"ipvs"}

// checkRequires checks a requires list: known names, each once.
func checkRequires(src, field string, req []string) error {
	seen := map[string]bool{}
	for i, r := range req {
		if !slices.Contains(Requirements, r) {
			return fieldErr(src, fmt.Sprintf("%s[%d]", field, i), r, "want one of %v", Requirements)
		}
		if seen[r] {
			return fieldErr(src, fmt.Sprintf("%s[%d]", field, i), r, "listed twice")
		}
		seen[r] = true
	}
	return nil
}

// Unmet says which of req this kernel lacks, and why; "" when it has them
// all. It only looks (at /proc, /sys and the running kernel's modules) and
// loads nothing.
func Unmet(req []string) string {
	var why []string
	for _, r := range req {
		if r == "ipvs" && !kernelHasIPVS() {
			why = append(why, "the kernel has no IPVS (no /proc/net/ip_vs and no ip_vs module for "+kernelRelease()+"); `sudo bin/svclab vm run -- …` runs a Debian kernel that has it")
		}
	}
	return strings.Join(why, "; ")
}

// kernelHasIPVS: IPVS is loaded (/proc/net/ip_vs, /sys/module/ip_vs) or
// the running kernel has the module to load.
func kernelHasIPVS() bool {
	for _, p := range []string{"/proc/net/ip_vs", "/sys/module/ip_vs"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	release := kernelRelease()
	if release == "" {
		return false
	}
	mods, _ := filepath.Glob(filepath.Join("/lib/modules", release, "kernel/net/netfilter/ipvs/ip_vs.ko*"))
	return len(mods) > 0
}

// kernelRelease is uname -r.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
