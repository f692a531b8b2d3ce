package vm

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Options say what to run in the VM and how big the VM is.
type Options struct {
	Command []string          // the command and its arguments, looked up in the guest's PATH
	Shares  []Share           // host directories to mount in the guest
	Env     map[string]string // added to (and overriding) the guest's base environment
	// Dir is the working directory in the guest; default: the host's working
	// directory when a share holds it (as the share maps it), else /root.
	Dir     string
	Timeout time.Duration // for the whole run, boot included; default 10 minutes
	Memory  int           // MiB; default 2048
	CPUs    int           // default 2 (at most the host's)
	Stdout  io.Writer     // the command's stdout; nil discards
	Stderr  io.Writer     // the command's stderr; nil discards
	Console io.Writer     // the serial console (kernel and init messages), when not nil
	Log     io.Writer     // progress: image build, accelerator; nil for none
	// Binary is the svclab binary linked as /usr/local/bin/svclab in the
	// guest (its directory is shared read-only at /opt/svclab/bin). Empty
	// looks for it: $SVCLAB_BIN, the running executable when it is named
	// svclab, svclab on PATH. "-" puts none.
	Binary   string
	CacheDir string // default CacheDir()
}

// Share is a host directory mounted in the guest over 9p.
type Share struct {
	HostPath  string // an existing directory
	GuestPath string // absolute; made in the guest when missing
	ReadOnly  bool
}

// Base environment of the command in the guest (before Options.Env).
func baseEnv(binary bool) map[string]string {
	env := map[string]string{
		"PATH": guestPath, "HOME": "/root", "USER": "root", "LOGNAME": "root",
		"TERM": "dumb", "LANG": "C.UTF-8", guestEnv: "1",
	}
	if binary {
		env["SVCLAB_BIN"] = "/usr/local/bin/svclab"
	}
	return env
}

// guestBinDir is where the svclab binary's directory is mounted.
const guestBinDir = "/opt/svclab/bin"

// reservedGuestPaths cannot be share targets: the guest's init owns them.
var reservedGuestPaths = []string{"/", "/proc", "/sys", "/dev", "/run", "/run/svclab", "/tmp", guestBinDir}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Memory <= 0 {
		o.Memory = 2048
	}
	if o.CPUs <= 0 {
		o.CPUs = min(2, runtime.NumCPU())
	}
	if o.CacheDir == "" {
		o.CacheDir = CacheDir()
	}
	return o
}

// resolveShares checks the shares and gives them 9p tags, parents before
// children so that nested shares mount in order.
func resolveShares(shares []Share) ([]share9p, []string, error) {
	type item struct {
		s     share9p
		guest string
	}
	var items []item
	for _, s := range shares {
		host, err := filepath.Abs(s.HostPath)
		if err != nil {
			return nil, nil, err
		}
		info, err := os.Stat(host)
		if err != nil {
			return nil, nil, fmt.Errorf("vm: share %s: %w", s.HostPath, err)
		}
		if !info.IsDir() {
			return nil, nil, fmt.Errorf("vm: share %s: not a directory (9p shares directories)", s.HostPath)
		}
		guest := filepath.Clean(s.GuestPath)
		if !filepath.IsAbs(s.GuestPath) {
			return nil, nil, fmt.Errorf("vm: share %s: guest path %q is not absolute", s.HostPath, s.GuestPath)
		}
		for _, r := range reservedGuestPaths {
			if guest == r {
				return nil, nil, fmt.Errorf("vm: share %s: guest path %s is reserved", s.HostPath, guest)
			}
		}
		if strings.ContainsAny(guest, "\t\n") {
			return nil, nil, fmt.Errorf("vm: share %s: guest path %q has a tab or newline", s.HostPath, guest)
		}
		items = append(items, item{share9p{Path: host, ReadOnly: s.ReadOnly}, guest})
	}
	sort.SliceStable(items, func(i, j int) bool {
		return strings.Count(items[i].guest, "/") < strings.Count(items[j].guest, "/")
	})
	var out []share9p
	var guests []string
	for i, it := range items {
		it.s.Tag = fmt.Sprintf("svclab.s%d", i)
		out = append(out, it.s)
		guests = append(guests, it.guest)
	}
	return out, guests, nil
}

// guestDir maps the host's working directory into the guest through the
// shares (the deepest share that holds it wins), or returns "/root".
func guestDir(shares []share9p, guests []string) string {
	wd, err := os.Getwd()
	if err != nil {
		return "/root"
	}
	best, bestLen := "/root", -1
	for i, s := range shares {
		rel, err := filepath.Rel(s.Path, wd)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if len(s.Path) > bestLen {
			best, bestLen = filepath.Join(guests[i], rel), len(s.Path)
		}
	}
	return best
}

// findBinary returns the svclab binary to put in the guest ("" for none).
func findBinary(opt string) (string, error) {
	if opt == "-" {
		return "", nil
	}
	candidate := opt
	if candidate == "" {
		if b := os.Getenv("SVCLAB_BIN"); b != "" {
			candidate = b
		} else if exe, err := os.Executable(); err == nil && filepath.Base(exe) == "svclab" {
			candidate = exe
		} else if p, err := exec.LookPath("svclab"); err == nil {
			candidate = p
		} else {
			return "", nil
		}
	}
	p, err := filepath.EvalSymlinks(candidate)
	if err == nil {
		p, err = filepath.Abs(p)
	}
	if err != nil {
		return "", fmt.Errorf("vm: svclab binary %s: %w", candidate, err)
	}
	if info, err := os.Stat(p); err != nil || !info.Mode().IsRegular() {
		return "", fmt.Errorf("vm: svclab binary %s: not a file", candidate)
	}
	return p, nil
}
