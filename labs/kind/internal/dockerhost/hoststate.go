package dockerhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/svclab/svclab/internal/privdir"
)

// hostState is what svclab's dockerd and the kind nodes changed outside
// their network namespace, kept in hostStateFile until Stop puts it back:
// whether /lib/modules existed before the daemon started, and each sysctl
// of the root namespace that changed while svclab's containers were being
// made (a tracked window: the daemon's start, a cluster's creation), with
// its value before and the value svclab's containers left.
//
// Only those are put back, and only while they still hold svclab's value:
// what the machine's administrator changes meanwhile (hardening:
// fs.protected_*, kernel.kptr_restrict, rp_filter, ip_forward=0) stays.
// The changes of another boot are ignored (sysctls do not survive a
// reboot; putting them back would undo the new boot's settings).
type hostState struct {
	// BootID is /proc/sys/kernel/random/boot_id when the state was saved.
	BootID            string                  `json:"bootID"`
	LibModulesExisted bool                    `json:"libModulesExisted"`
	SysctlChanges     map[string]sysctlChange `json:"sysctlChanges,omitempty"` // path below /proc/sys → change
}

// sysctlChange is one sysctl svclab's containers changed.
type sysctlChange struct {
	Before string `json:"before"` // its value before svclab's containers ran
	Svclab string `json:"svclab"` // the value they left
}

// hostPaths are the host's files the state is about, apart for tests (a
// fake /proc/sys tree, a temporary state file).
type hostPaths struct {
	procSys    string // /proc/sys
	stateFile  string // hostStateFile
	libModules string // /lib/modules
}

var theHost = hostPaths{procSys: "/proc/sys", stateFile: hostStateFile, libModules: "/lib/modules"}

// volatileSysctls change by themselves; they are neither saved nor restored.
var volatileSysctls = []string{"kernel/ns_last_pid", "kernel/random/", "fs/binfmt_misc/", "kernel/hung_task", "vm/stat_refresh", "kernel/sched_", "kernel/perf_event"}

// snapshotSysctls reads every writable sysctl below root (/proc/sys),
// leaving out per-interface network settings (only conf/all and
// conf/default are kept: the nodes' interfaces live in other namespaces).
func snapshotSysctls(root string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(root, path)
		if rerr != nil || rel == "." {
			return nil
		}
		if d.IsDir() {
			if skipSysctlDir(rel) {
				return fs.SkipDir
			}
			return nil
		}
		for _, v := range volatileSysctls {
			if strings.HasPrefix(rel, v) {
				return nil
			}
		}
		info, err := d.Info()
		if err != nil || info.Mode().Perm()&0o600 != 0o600 {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		out[rel] = string(data)
		return nil
	})
	return out, err
}

// skipSysctlDir leaves out per-device network directories.
func skipSysctlDir(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) == 4 && parts[0] == "net" && (parts[2] == "conf" || parts[2] == "neigh") {
		return parts[3] != "all" && parts[3] != "default"
	}
	return strings.HasPrefix(rel, "fs/binfmt_misc")
}

// bootID is the kernel's id of this boot, read below root ("" when
// unreadable: no saved change is then ever put back).
func bootID(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// sysctlChanges is what changed between two snapshots: the sysctls found
// in both with different values.
func sysctlChanges(before, after map[string]string) map[string]sysctlChange {
	out := map[string]sysctlChange{}
	for k, b := range before {
		if a, ok := after[k]; ok && a != b {
			out[k] = sysctlChange{Before: b, Svclab: a}
		}
	}
	return out
}

// addChanges merges a window's changes into the saved ones: a sysctl
// changed before keeps its first value before, and gets the newer value.
func (st *hostState) addChanges(changes map[string]sysctlChange) {
	if len(changes) == 0 {
		return
	}
	if st.SysctlChanges == nil {
		st.SysctlChanges = map[string]sysctlChange{}
	}
	for k, c := range changes {
		if old, ok := st.SysctlChanges[k]; ok {
			c.Before = old.Before
		}
		if c.Before == c.Svclab {
			delete(st.SysctlChanges, k) // changed back
			continue
		}
		st.SysctlChanges[k] = c
	}
}

// restoreSysctls puts back, below root, each changed sysctl that still
// holds svclab's value; it reports what it put back, and what it left
// because something else changed it since (the administrator's choice
// wins over svclab's snapshot).
func restoreSysctls(root string, changes map[string]sysctlChange) (restored, left []string, err error) {
	var failed []string
	keys := make([]string, 0, len(changes))
	for k := range changes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := changes[k]
		name := strings.ReplaceAll(k, "/", ".")
		path := filepath.Join(root, k)
		now, rerr := os.ReadFile(path)
		if rerr != nil || string(now) == c.Before {
			continue
		}
		if string(now) != c.Svclab {
			left = append(left, fmt.Sprintf("%s=%s (changed since svclab's containers set %s)", name, strings.TrimSpace(string(now)), strings.TrimSpace(c.Svclab)))
			continue
		}
		if werr := os.WriteFile(path, []byte(c.Before), 0o644); werr != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", name, werr))
			continue
		}
		restored = append(restored, name+"="+strings.TrimSpace(c.Before))
	}
	if len(failed) > 0 {
		return restored, left, fmt.Errorf("could not restore sysctls: %s", strings.Join(failed, ", "))
	}
	return restored, left, nil
}

// load reads the saved state; nil when there is none.
func (h hostPaths) load() (*hostState, error) {
	data, err := os.ReadFile(h.stateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st hostState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", h.stateFile, err)
	}
	return &st, nil
}

// save writes the state atomically, readable by root only.
func (h hostPaths) save(st *hostState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := privdir.Ensure(filepath.Dir(h.stateFile)); err != nil {
		return err
	}
	tmp := h.stateFile + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, h.stateFile)
}

// begin saves, before svclab's dockerd starts, whether /lib/modules
// exists. A state saved in this boot is kept (the daemon crashed: its
// changes are still to be put back); one of another boot loses its sysctl
// changes (a reboot reset them) but remembers that /lib/modules was
// Docker's.
func (h hostPaths) begin() error {
	old, err := h.load()
	if err != nil {
		old = nil // unreadable: started afresh, as after a reboot
	}
	boot := bootID(h.procSys)
	if old != nil && old.BootID == boot && boot != "" {
		return nil
	}
	_, statErr := os.Stat(h.libModules)
	st := &hostState{BootID: boot, LibModulesExisted: statErr == nil}
	if old != nil && !old.LibModulesExisted {
		st.LibModulesExisted = false
	}
	return h.save(st)
}

// record adds a window's changes (before: the snapshot taken when it
// began) to the saved state. A window that began in another boot, or a
// state of another boot, records nothing.
func (h hostPaths) record(boot string, before map[string]string) error {
	if before == nil || boot == "" || boot != bootID(h.procSys) {
		return nil
	}
	after, err := snapshotSysctls(h.procSys)
	if err != nil {
		return err
	}
	st, err := h.load()
	if err != nil {
		return err
	}
	if st == nil {
		_, statErr := os.Stat(h.libModules)
		st = &hostState{BootID: boot, LibModulesExisted: statErr == nil}
	}
	if st.BootID != boot {
		st = &hostState{BootID: boot, LibModulesExisted: st.LibModulesExisted}
	}
	st.addChanges(sysctlChanges(before, after))
	return h.save(st)
}

// restore puts back the saved state (see hostState) and forgets it. Its
// report is one line per sysctl put back or left (and why).
func (h hostPaths) restore() ([]string, error) {
	st, err := h.load()
	if err != nil || st == nil {
		return nil, err
	}
	var report []string
	if boot := bootID(h.procSys); st.BootID != boot || boot == "" {
		if len(st.SysctlChanges) > 0 {
			report = append(report, fmt.Sprintf("ignored %d sysctl changes saved in %s in another boot", len(st.SysctlChanges), h.stateFile))
		}
	} else {
		restored, left, err := restoreSysctls(h.procSys, st.SysctlChanges)
		for _, r := range restored {
			report = append(report, "restored "+r)
		}
		for _, l := range left {
			report = append(report, "left "+l)
		}
		if err != nil {
			return report, err
		}
	}
	if !st.LibModulesExisted {
		// Docker made it as the source of kind's /lib/modules bind mount;
		// it is empty unless someone put something there since.
		if entries, err := os.ReadDir(h.libModules); err == nil && len(entries) == 0 {
			if err := os.Remove(h.libModules); err != nil {
				return report, err
			}
			report = append(report, "removed the empty "+h.libModules+" Docker created")
		}
	}
	return report, os.Remove(h.stateFile)
}

// SnapshotSysctls is every writable sysctl of the root namespace that
// svclab's dockerd saves and restores (for tests that check the host is
// left as it was).
func SnapshotSysctls() (map[string]string, error) { return snapshotSysctls(theHost.procSys) }
