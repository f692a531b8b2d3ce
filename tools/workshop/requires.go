package workshop

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Requirements are what a step or exercise may require of the kernel
// (Step.Requires, Exercise.Requires):
//
//	ipvs    the IP Virtual Server (CONFIG_IP_VS, built in or as the ip_vs module)
//	native  not inside svclab's VM (SVCLAB_VM=1): for steps whose output is
//	        timings, which there would be the VM's (under TCG, an
//	        emulator's), not the machine's
//
// Many kernels (this project's CI machine's among them) have no IPVS; the
// IPVS parts of a lesson are then skipped, and svclab's VM (`svclab vm
// run`, Debian's stock kernel) is where they run: VMCommand.
var Requirements = []string{"ipvs", "native"}

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
			why = append(why, "the kernel has no IPVS (no /proc/net/ip_vs and no ip_vs module for "+kernelRelease()+")")
		}
		if r == "native" && os.Getenv("SVCLAB_VM") == "1" {
			why = append(why, "this is svclab's VM (SVCLAB_VM=1): its timings would be the VM's, not this machine's")
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

// VMCommand is the command, run from the svclab checkout, that runs the
// whole lesson (every step, with its expectations checked) in svclab's VM,
// whose Debian kernel has what Requirements name.
func VMCommand(l *Lesson) string {
	return `sudo bin/svclab vm run --share "$PWD:ro" -- svclab workshop start ` + l.Metadata.Name + ` --auto`
}

// unmetNote is what a skipped step or an exercise that cannot be checked
// says: why, and, when svclab's VM has what this kernel lacks, how to run
// it there.
func unmetNote(l *Lesson, req []string) string {
	why := Unmet(req)
	if inVM(req) {
		why += "; it runs in svclab's VM: " + VMCommand(l)
	}
	return why
}

// inVM reports whether req is unmet here for want of IPVS, which svclab's
// VM has.
func inVM(req []string) bool {
	return slices.Contains(req, "ipvs") && Unmet([]string{"ipvs"}) != ""
}

// WriteUnmet tells, before a lesson's first step, which of its steps and
// exercises this kernel cannot run for want of IPVS, and how to run them
// in svclab's VM. It writes nothing when the kernel has IPVS (other unmet
// requirements are said at their step).
func WriteUnmet(out io.Writer, l *Lesson) {
	var parts, whys []string
	note := func(kind, name string, req []string) {
		if !inVM(req) {
			return
		}
		why := Unmet([]string{"ipvs"})
		parts = append(parts, kind+" "+name)
		if !slices.Contains(whys, why) {
			whys = append(whys, why)
		}
	}
	for _, st := range l.Spec.Steps {
		note("step", st.Name, st.Requires)
	}
	for _, ex := range l.Spec.Exercises {
		note("exercise", ex.Name, ex.Requires)
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(out, "\nNot all of this lesson runs on this machine: %s.\n", strings.Join(whys, "; "))
	writeIndented(out, "Skipped here: "+strings.Join(parts, ", ")+".")
	fmt.Fprintf(out, "They run in svclab's VM (Debian's stock kernel under qemu; without KVM a step can take a minute or more).\n")
	fmt.Fprintf(out, "From the svclab checkout, the whole lesson, every step checked:\n")
	writeIndented(out, VMCommand(l))
	fmt.Fprintf(out, "Each `svclab vm run` is one command in a fresh VM: to try an exercise there, chain the start, your commands and\n"+
		"`svclab workshop check EXERCISE` in one `sh -c '…'` after the --.\n")
}
