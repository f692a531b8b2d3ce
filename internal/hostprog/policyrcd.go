package hostprog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// DefaultPolicyRCD is where Debian's invoke-rc.d looks for a policy:
// while it exits 101, no package's service is started or restarted.
const DefaultPolicyRCD = "/usr/sbin/policy-rc.d"

// PolicyRCDMarker is the line that makes a policy-rc.d svclab's own. Only
// a file with this line is ever removed by svclab: an administrator's
// policy-rc.d (a container image's, a build chroot's) is left as it is.
const PolicyRCDMarker = "# svclab-policy-rc.d: written while svclab installs packages, removed when it is done (svclab get leftovers)"

const policyRCDScript = "#!/bin/sh\n" + PolicyRCDMarker + "\nexit 101\n"

// policyRCDHeldWait bounds the wait for another svclab's install to end
// and remove its policy-rc.d (apt's own lock waits as long).
const policyRCDHeldWait = 2 * time.Minute

// A policy-rc.d's life, and what a crash at each point leaves:
//
//	phase                           on disk                        a crash leaves      recovered by
//	create (O_EXCL|O_NOFOLLOW)      empty file, flocked (read fd)  an empty file       nobody: not svclab's (no marker); harmless
//	write the script                svclab's script, flocked       svclab's, unlocked  the next Ensure as root; get leftovers lists it
//	apt-get update/install          same                           same                same
//	release (signal or return)      removed if still the same file -                   -
//
// The flock is held on a read-only descriptor (a writable one would make
// invoke-rc.d's exec fail with ETXTBSY) from before the marker is written
// until the file is removed: svclab's policy-rc.d that nobody holds was
// left by an install that died (SIGKILL, a second Ctrl-C, a power cut).

// policyState is what lies at a policy-rc.d path.
type policyState int

const (
	policyAbsent   policyState = iota
	policyForeign              // not svclab's (no marker, not a regular file of root's): never touched
	policyHeld                 // svclab's, and a live svclab install holds it
	policyLeftover             // svclab's, and nobody holds it: a dead install's
)

// holdServices puts svclab's policy-rc.d at path for an install and
// returns the function that removes it. A leftover of svclab's is
// replaced; another live install's is waited for (bounded); a
// policy-rc.d that is not svclab's is left in place and used as it is.
func holdServices(ctx context.Context, path string, log io.Writer) (release func(), err error) {
	deadline := time.Now().Add(policyRCDHeldWait)
	for {
		release, err := createPolicyRCD(path)
		if err == nil {
			return release, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		state, locked, err := inspectPolicyRCD(path)
		if err != nil {
			return nil, err
		}
		switch state {
		case policyForeign:
			return func() {}, nil
		case policyLeftover:
			removeLocked(path, locked)
			logf(log, "removed %s: svclab's, left by an install that was interrupted", path)
		case policyHeld:
			if time.Now().After(deadline) {
				logf(log, "%s: another svclab install still holds it after %s; installing with its policy in place", path, policyRCDHeldWait)
				return func() {}, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// createPolicyRCD makes svclab's policy-rc.d at path, which must not exist
// (O_EXCL: nor as a symbolic link), locked until release removes it.
func createPolicyRCD(path string) (release func(), err error) {
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o755)
	if err != nil {
		return nil, err
	}
	fail := func(err error, r *os.File) (func(), error) {
		w.Close()
		if r != nil {
			r.Close()
		}
		os.Remove(path)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail(err, nil)
	}
	if err := syscall.Flock(int(r.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(fmt.Errorf("lock: %w", err), r)
	}
	if _, err := w.WriteString(policyRCDScript); err != nil {
		return fail(err, r)
	}
	if err := w.Chmod(0o755); err != nil { // whatever the umask
		return fail(err, r)
	}
	if err := w.Close(); err != nil {
		return fail(err, r)
	}
	return func() { removeLocked(path, r) }, nil
}

// inspectPolicyRCD says what lies at path, without following a symbolic
// link or opening anything but a regular file of root's (or the caller's).
// For a leftover it returns the file, locked, for removeLocked.
func inspectPolicyRCD(path string) (policyState, *os.File, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return policyAbsent, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	if !fi.Mode().IsRegular() || !ownedByRootOrMe(fi) {
		return policyForeign, nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return policyAbsent, nil, nil
	case errors.Is(err, syscall.ELOOP):
		return policyForeign, nil, nil
	case err != nil:
		return 0, nil, err
	}
	opened, err := f.Stat()
	if err != nil || !os.SameFile(fi, opened) || !isPolicyRCDOfSvclab(f) {
		f.Close()
		return policyForeign, nil, nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return policyHeld, nil, nil
	}
	return policyLeftover, f, nil
}

// isPolicyRCDOfSvclab reports whether the file's first lines hold the
// marker line.
func isPolicyRCDOfSvclab(f *os.File) bool {
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	for _, line := range bytes.Split(head[:n], []byte("\n")) {
		if string(line) == PolicyRCDMarker {
			return true
		}
	}
	return false
}

// removeLocked removes path when it still names the file f holds (locked),
// then closes f, which drops the lock.
func removeLocked(path string, f *os.File) {
	defer f.Close()
	held, err := f.Stat()
	if err != nil {
		return
	}
	if now, err := os.Lstat(path); err == nil && os.SameFile(held, now) {
		os.Remove(path)
	}
}

// removeLeftoverPolicyRCD removes svclab's policy-rc.d at path when no
// live install holds it, and says so to log.
func removeLeftoverPolicyRCD(path string, log io.Writer) error {
	state, locked, err := inspectPolicyRCD(path)
	if err != nil || state != policyLeftover {
		return err
	}
	removeLocked(path, locked)
	logf(log, "removed %s: svclab's, left by an install that was interrupted (it kept every package's services from restarting)", path)
	return nil
}

// Leftover is something an interrupted svclab command left on the host.
type Leftover struct {
	Path string
	What string // for a person: what it does, and what removes it
}

// HostLeftovers lists what interrupted svclab commands left on the host:
// svclab's policy-rc.d when no running svclab holds it (an install killed
// with SIGKILL, a second Ctrl-C, a power cut), which keeps every
// package's services from starting and restarting, upgrades included.
func HostLeftovers() ([]Leftover, error) { return hostLeftovers(DefaultPolicyRCD) }

func hostLeftovers(policyRCD string) ([]Leftover, error) {
	state, locked, err := inspectPolicyRCD(policyRCD)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", policyRCD, err)
	}
	if state != policyLeftover {
		return nil, nil
	}
	locked.Close()
	return []Leftover{{Path: policyRCD, What: "svclab's policy-rc.d (exit 101), left by a package install that was interrupted: " +
		"no package's service starts or restarts, security upgrades included; the next svclab command run as root removes it (or: sudo rm " + policyRCD + ")"}}, nil
}

func ownedByRootOrMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (st.Uid == 0 || int(st.Uid) == os.Geteuid())
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
