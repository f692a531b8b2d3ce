package dockerhost

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// hostState is what svclab's dockerd and the kind nodes may change
// outside their network namespace, saved before the daemon starts.
type hostState struct {
	LibModulesExisted bool              `json:"libModulesExisted"`
	Sysctls           map[string]string `json:"sysctls"` // /proc/sys path → value
}

// volatileSysctls change by themselves; they are neither saved nor restored.
var volatileSysctls = []string{"kernel/ns_last_pid", "kernel/random/", "fs/binfmt_misc/", "kernel/hung_task", "vm/stat_refresh", "kernel/sched_", "kernel/perf_event"}

// snapshotSysctls reads every writable sysctl of the root namespace,
// leaving out per-interface network settings (only conf/all and
// conf/default are kept: the nodes' interfaces live in other namespaces).
func snapshotSysctls() (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir("/proc/sys", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel := strings.TrimPrefix(path, "/proc/sys/")
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

// restoreSysctls writes back the values that differ now, and returns what
// it changed (for the report) and what it could not change.
func restoreSysctls(saved map[string]string) (restored []string, err error) {
	var failed []string
	keys := make([]string, 0, len(saved))
	for k := range saved {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := filepath.Join("/proc/sys", k)
		now, rerr := os.ReadFile(path)
		if rerr != nil || string(now) == saved[k] {
			continue
		}
		if werr := os.WriteFile(path, []byte(saved[k]), 0o644); werr != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", k, werr))
			continue
		}
		restored = append(restored, strings.ReplaceAll(k, "/", ".")+"="+strings.TrimSpace(saved[k]))
	}
	if len(failed) > 0 {
		return restored, fmt.Errorf("could not restore sysctls: %s", strings.Join(failed, ", "))
	}
	return restored, nil
}

// saveHostState writes the host's state unless a saved one is there
// already (the daemon crashed, the first snapshot is the truth).
func saveHostState() error {
	if _, err := os.Stat(hostStateFile); err == nil {
		return nil
	}
	sysctls, err := snapshotSysctls()
	if err != nil {
		return err
	}
	_, statErr := os.Stat("/lib/modules")
	st := hostState{LibModulesExisted: statErr == nil, Sysctls: sysctls}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return err
	}
	tmp := hostStateFile + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, hostStateFile)
}

// restoreHostState puts back the saved state and forgets it.
func restoreHostState() ([]string, error) {
	data, err := os.ReadFile(hostStateFile)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st hostState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", hostStateFile, err)
	}
	restored, err := restoreSysctls(st.Sysctls)
	if err != nil {
		return restored, err
	}
	if !st.LibModulesExisted {
		// Docker made it as the source of kind's /lib/modules bind mount;
		// it is empty unless someone put something there since.
		if entries, err := os.ReadDir("/lib/modules"); err == nil && len(entries) == 0 {
			if err := os.Remove("/lib/modules"); err != nil {
				return restored, err
			}
			restored = append(restored, "removed the empty /lib/modules Docker created")
		}
	}
	return restored, os.Remove(hostStateFile)
}

// SnapshotSysctls is every writable sysctl of the root namespace that
// svclab's dockerd saves and restores (for tests that check the host is
// left as it was).
func SnapshotSysctls() (map[string]string, error) { return snapshotSysctls() }
