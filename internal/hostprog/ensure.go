package hostprog

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/svclab/svclab/internal/cmdrun"
)

// NoInstallEnv, set to 1, turns installing off: Ensure only checks.
const NoInstallEnv = "SVCLAB_NO_INSTALL"

// sbinDirs are looked in besides PATH: sudo and su reset PATH, and a
// user's PATH often lacks them.
var sbinDirs = []string{"/usr/local/sbin", "/usr/sbin", "/sbin"}

// Host finds and installs programs. The zero value is not usable: Default
// returns the real one; tests set the seams.
type Host struct {
	// Log is told what is installed; nil is quiet.
	Log io.Writer
	// LookPath finds a program (default: PATH, then sbinDirs).
	LookPath func(name string) (string, error)
	// StatFile says whether a data file (DataFiles) is there (default: a
	// regular file at its path); nil is the default.
	StatFile func(path string) error
	// Run runs a command (apt-get) and returns its output (default:
	// cmdrun, whose error carries the command and its output's tail).
	Run func(ctx context.Context, env []string, argv ...string) (string, error)
	// Install says whether missing programs may be installed; when false,
	// Ensure fails at once naming them and their packages.
	Install bool
	// PolicyRCD is where svclab's policy-rc.d (keeping the packages'
	// services from starting) is put while installing, when no other
	// policy-rc.d is there; a leftover of svclab's found there is removed
	// by every Ensure that may install. Empty: none.
	PolicyRCD string
}

// Override, when not nil, is the Host that Ensure and Check use instead
// of Default's: tests of a command set a fake lookup and installer to see
// that it checks its programs before it starts.
var Override *Host

// Default is the real host (or Override): installing is on when running as root and
// SVCLAB_NO_INSTALL is not 1.
func Default(log io.Writer) *Host {
	if Override != nil {
		h := *Override
		if h.Log == nil {
			h.Log = log
		}
		return &h
	}
	return &Host{
		Log:       log,
		LookPath:  lookPath,
		StatFile:  statFile,
		Run:       run,
		Install:   os.Geteuid() == 0 && os.Getenv(NoInstallEnv) != "1",
		PolicyRCD: DefaultPolicyRCD,
	}
}

// Ensure makes sure programs are on the host: the missing ones are
// installed (see Host.Ensure) or named in the error. log is told what is
// installed; nil is quiet.
func Ensure(ctx context.Context, log io.Writer, programs ...string) error {
	_, err := Default(log).Ensure(ctx, programs...)
	return err
}

// Check is Ensure without installing: for processes that must not run
// apt-get (the proxy, which also runs inside kind nodes).
func Check(programs ...string) error {
	h := Default(nil)
	h.Install = false
	_, err := h.Ensure(context.Background(), programs...)
	return err
}

// Ensure looks up each program (PATH, then /usr/local/sbin, /usr/sbin,
// /sbin) or data file (DataFiles, by path) and installs the Debian
// packages of the missing ones: one
// `apt-get update`, then one `apt-get install` of them all, their services
// kept from starting. It returns the packages it installed. An undeclared
// program is an error (a programming one: declare it in Programs). When it
// may install, it first removes svclab's policy-rc.d that an interrupted
// install left (see policyrcd.go).
// CLI: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends PKG…
func (h *Host) Ensure(ctx context.Context, programs ...string) ([]string, error) {
	if h.Install && h.PolicyRCD != "" {
		if err := removeLeftoverPolicyRCD(h.PolicyRCD, h.Log); err != nil {
			logf(h.Log, "checking for a leftover policy-rc.d: %v", err)
		}
	}
	var missing []Program
	for _, name := range programs {
		p, ok := Lookup(name)
		if !ok {
			p, ok = lookupDataFile(name)
		}
		if !ok {
			return nil, fmt.Errorf("program %q is not declared in internal/hostprog (Programs): declare it with its Debian package", name)
		}
		if slices.ContainsFunc(missing, func(m Program) bool { return m.Name == name }) {
			continue
		}
		if err := h.find(name); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	var pkgs []string
	for _, p := range missing {
		if p.Package == "" {
			return nil, fmt.Errorf("%s not found (in PATH, %s): %s needs it (%s); it is not installed from Debian: install it and put it on PATH",
				p.Name, strings.Join(sbinDirs, ", "), joinUses(p.Uses), p.Why)
		}
		if !slices.Contains(pkgs, p.Package) {
			pkgs = append(pkgs, p.Package)
		}
	}
	if !h.Install {
		how := "svclab installs missing packages only as root: run it with sudo, or"
		if os.Getenv(NoInstallEnv) == "1" {
			how = "installing is off (" + NoInstallEnv + "=1):"
		}
		return nil, fmt.Errorf("missing %s; %s apt-get install %s",
			describe(missing), how, strings.Join(pkgs, " "))
	}
	if h.Log != nil {
		fmt.Fprintf(h.Log, "installing Debian packages on the host: %s (for %s)\n", strings.Join(pkgs, " "), names(missing))
	}
	if err := h.install(ctx, pkgs); err != nil {
		return nil, fmt.Errorf("missing %s, installing failed: %w", describe(missing), err)
	}
	for _, p := range missing {
		if err := h.find(p.Name); err != nil {
			if _, file := lookupDataFile(p.Name); file {
				return pkgs, fmt.Errorf("installed Debian package %s, but %s is still missing: %w", p.Package, p.Name, err)
			}
			return pkgs, fmt.Errorf("installed Debian package %s, but %s is still not found (PATH, %s)", p.Package, p.Name, strings.Join(sbinDirs, ", "))
		}
	}
	return pkgs, nil
}

// find looks a program up, or checks a data file (an absolute path).
func (h *Host) find(name string) error {
	if _, ok := lookupDataFile(name); ok {
		if h.StatFile == nil {
			return statFile(name)
		}
		return h.StatFile(name)
	}
	_, err := h.LookPath(name)
	return err
}

// install runs apt-get update, then apt-get install of pkgs, with
// svclab's policy-rc.d keeping their services (dockerd, containerd…) from
// starting, unless another policy-rc.d is in place. The policy is removed
// on every way out: a return, an error, and SIGINT, SIGTERM or SIGHUP,
// which stop apt-get and make install fail instead of ending the process
// (only what cannot be caught, SIGKILL, leaves it: the next Ensure
// removes it, `svclab get leftovers` lists it).
func (h *Host) install(ctx context.Context, pkgs []string) (err error) {
	if policy := h.PolicyRCD; policy != "" {
		// Signals are caught first, so that the policy is removed (by the
		// deferred release, before stop) whenever one comes.
		sigCtx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
		defer func() {
			if err != nil && sigCtx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("interrupted by a signal: apt-get stopped, %s removed: %w", policy, err)
			}
		}()
		release, err := holdServices(sigCtx, policy, h.Log)
		if err != nil {
			return fmt.Errorf("keeping services from starting (%s): %w", policy, err)
		}
		defer release()
		ctx = sigCtx
	}
	env := []string{"DEBIAN_FRONTEND=noninteractive", "LC_ALL=C"}
	lock := []string{"-o", "DPkg::Lock::Timeout=120"}
	if _, err := h.Run(ctx, env, append([]string{AptGet, "update", "-q"}, lock...)...); err != nil {
		return err
	}
	args := append(append([]string{AptGet, "install", "-y", "-q", "--no-install-recommends"}, lock...), pkgs...)
	_, err = h.Run(ctx, env, args...)
	return err
}

// describe names each program with its package and what needs it.
func describe(ps []Program) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s (Debian package %s, for %s)", p.Name, p.Package, joinUses(p.Uses))
	}
	word := "program"
	if len(ps) > 1 {
		word = "programs"
	}
	return word + " " + strings.Join(parts, ", ")
}

func names(ps []Program) string {
	n := make([]string, len(ps))
	for i, p := range ps {
		n[i] = p.Name
	}
	return strings.Join(n, " ")
}

func joinUses(us []Use) string {
	if len(us) == 0 {
		return "svclab"
	}
	s := make([]string, len(us))
	for i, u := range us {
		s[i] = string(u)
	}
	return strings.Join(s, "; ")
}

// lookPath is exec.LookPath, then the sbin directories PATH may lack; a
// program found only there gets its directory appended to PATH, so that the
// command that runs it by name next finds it too.
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	for _, dir := range sbinDirs {
		c := filepath.Join(dir, name)
		if fi, serr := os.Stat(c); serr == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			os.Setenv("PATH", os.Getenv("PATH")+string(os.PathListSeparator)+dir)
			return c, nil
		}
	}
	return "", err
}

// run runs argv with env added and returns its output; the error
// (a *cmdrun.Error) names the command and carries its output's tail.
// Stopped, apt-get gets SIGTERM first: dpkg finishes the step it is in.
func run(ctx context.Context, env []string, argv ...string) (string, error) {
	out, err := cmdrun.Command(argv...).WithEnv(env...).WithStopSignal(syscall.SIGTERM, 30*time.Second).Output(ctx)
	return string(out), err
}
