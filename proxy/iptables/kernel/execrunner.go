package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/hostprog"
)

// Backend selects which iptables binaries an ExecRunner runs.
type Backend string

const (
	// BackendHost runs plain `iptables`, whatever the host's alternatives
	// point it at. This is what upstream does.
	BackendHost Backend = ""
	// BackendLegacy runs iptables-legacy, iptables-legacy-save and
	// iptables-legacy-restore.
	BackendLegacy Backend = "legacy"
	// BackendNFT runs iptables-nft, iptables-nft-save and
	// iptables-nft-restore.
	BackendNFT Backend = "nft"
)

// ParseBackend accepts "", "iptables" or "host", "legacy" and "nft".
func ParseBackend(s string) (Backend, error) {
	switch s {
	case "", "host", "iptables":
		return BackendHost, nil
	case "legacy":
		return BackendLegacy, nil
	case "nft":
		return BackendNFT, nil
	}
	return "", fmt.Errorf("iptables backend %q: want host, legacy or nft", s)
}

// binary is the backend's name for tool ("iptables", "iptables-save" or
// "iptables-restore").
func (b Backend) binary(tool string) string {
	if b == BackendHost {
		return tool
	}
	return strings.Replace(tool, "iptables", "iptables-"+string(b), 1)
}

// ip6 is the IPv6 spelling of an iptables tool's name: ip6tables,
// ip6tables-legacy-save, ip6tables-nft-restore...
func ip6(tool string) string { return strings.Replace(tool, "iptables", "ip6tables", 1) }

// waitArgs make iptables wait up to 5 seconds for the xtables lock instead
// of failing. Upstream: WaitString and WaitSecondsValue.
var waitArgs = []string{"-w", "5"}

// ExecRunner is the Runner that runs the iptables binaries.
type ExecRunner struct {
	backend Backend
	family  corev1.IPFamily
	netns   string
	version Version
	observe func(program string)
}

// ExecOptions configure an ExecRunner.
type ExecOptions struct {
	Backend Backend
	// Family selects the binaries of an address family: IPv6 runs
	// ip6tables, ip6tables-save and ip6tables-restore (or their -legacy and
	// -nft variants); the zero value and IPv4 run iptables.
	Family corev1.IPFamily
	// NetNS, when set, runs every command inside that named network
	// namespace (`ip netns exec NAME ...`).
	NetNS string
	// Observe, when set, is called with the program's name (iptables,
	// iptables-save...) before each program the runner runs, the version
	// check included: how benchmarks count execs, whichever method runs
	// them.
	Observe func(program string)
}

// NewExecRunner checks that the backend's iptables runs and reads its
// version.
func NewExecRunner(opts ExecOptions) (*ExecRunner, error) {
	if opts.Family != "" && opts.Family != corev1.IPv4Protocol && opts.Family != corev1.IPv6Protocol {
		return nil, fmt.Errorf("iptables runner: IP family %q: want IPv4 or IPv6", opts.Family)
	}
	r := &ExecRunner{backend: opts.Backend, family: opts.Family, netns: opts.NetNS, observe: opts.Observe}
	if err := hostprog.Check(r.programs()...); err != nil {
		return nil, err
	}
	v, err := r.detectVersion()
	if err != nil {
		return nil, err
	}
	r.version = v
	return r, nil
}

// Family is the address family whose binaries the runner runs (IPv4 for
// the zero ExecOptions.Family).
func (r *ExecRunner) Family() corev1.IPFamily {
	if r.family == corev1.IPv6Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

// binary is the name of the runner's tool ("iptables", "iptables-save" or
// "iptables-restore") for its backend and family.
func (r *ExecRunner) binary(tool string) string {
	name := r.backend.binary(tool)
	if r.family == corev1.IPv6Protocol {
		return ip6(name)
	}
	return name
}

// DetectMode reports whether the backend's iptables drives legacy x_tables
// or nf_tables, from `iptables --version`.
func DetectMode(backend Backend) (Mode, error) {
	r := &ExecRunner{backend: backend}
	v, err := r.detectVersion()
	return v.Mode, err
}

func (r *ExecRunner) detectVersion() (Version, error) {
	bin := r.binary("iptables")
	return cachedVersion(bin, r.netns, func() (Version, error) {
		out, err := r.command(bin, "--version").CombinedOutput()
		if err != nil {
			return Version{}, fmt.Errorf("%s --version: %w: %s", bin, err, bytes.TrimSpace(out))
		}
		return ParseVersion(string(out))
	})
}

// Version is the iptables version and mode found by NewExecRunner.
func (r *ExecRunner) Version() Version { return r.version }

// Mode says which kernel interface this runner drives.
func (r *ExecRunner) Mode() Mode { return r.version.Mode }

// HasRandomFully implements Runner.
func (r *ExecRunner) HasRandomFully() bool { return r.version.HasRandomFully() }

// Restore implements Runner with one `iptables-restore --noflush --counters
// -w 5` call for the whole payload.
func (r *ExecRunner) Restore(payload []byte) error {
	bin := r.binary("iptables-restore")
	cmd := r.command(bin, slices.Concat(waitArgs, []string{"--noflush", "--counters"})...)
	cmd.Stdin = bytes.NewReader(payload)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return NewRestoreError(bin, out, payload, err)
	}
	return nil
}

// RestoreStream implements StreamRestorer: the same iptables-restore call
// as Restore, with the payload's parts streamed to its stdin (joined only
// to name the offending line when it is rejected).
func (r *ExecRunner) RestoreStream(p StreamedPayload) error {
	bin := r.binary("iptables-restore")
	cmd := r.command(bin, slices.Concat(waitArgs, []string{"--noflush", "--counters"})...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return NewRestoreError(bin, nil, p.Payload(), err)
	}
	_, werr := p.WriteTo(stdin)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return NewRestoreError(bin, out.Bytes(), p.Payload(), err)
	}
	if werr != nil {
		return NewRestoreError(bin, out.Bytes(), p.Payload(), werr)
	}
	return nil
}

// Save implements Runner.
func (r *ExecRunner) Save(table string) ([]byte, error) {
	bin := r.binary("iptables-save")
	cmd := r.command(bin, "-t", table)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s -t %s: %w: %s", bin, table, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// EnsureJump implements Runner: `iptables -N` for the target chain, then
// `iptables -C` and, if the rule is missing, `iptables -I`.
// Upstream: EnsureChain followed by EnsureRule(Prepend, ...).
func (r *ExecRunner) EnsureJump(rule JumpRule) error {
	subject := fmt.Sprintf("jump %s -> %s in table %s", rule.Chain, rule.Target, rule.Table)
	if err := r.ensureChain(rule.Table, rule.Target); err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	exists, err := r.ruleExists(rule.Table, rule.Chain, rule.Args())
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	if exists {
		return nil
	}
	if _, err := r.iptables(append([]string{"-t", rule.Table, "-I", rule.Chain}, rule.Args()...)...); err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	return nil
}

func (r *ExecRunner) ensureChain(table, chain string) error {
	_, err := r.iptables("-t", table, "-N", chain)
	if err == nil {
		return nil
	}
	// -N fails with status 1 when the chain exists; confirm with -S.
	if _, listErr := r.iptables("-t", table, "-S", chain); listErr == nil {
		return nil
	}
	return err
}

func (r *ExecRunner) ruleExists(table, chain string, args []string) (bool, error) {
	_, err := r.iptables(append([]string{"-t", table, "-C", chain}, args...)...)
	if err == nil {
		return true, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}

// iptables runs the backend's iptables with the wait flag. A run that
// could not even read its table because the kernel's call was interrupted
// (tableInitInterrupted) changed nothing and is run again, at most
// interruptedAttempts times in all.
func (r *ExecRunner) iptables(args ...string) ([]byte, error) {
	bin := r.binary("iptables")
	var out []byte
	var err error
	for range interruptedAttempts {
		out, err = r.command(bin, slices.Concat(waitArgs, args)...).CombinedOutput()
		if err == nil || !tableInitInterrupted(err, out) {
			break
		}
	}
	if err != nil {
		return out, &commandError{cmd: bin + " " + strings.Join(args, " "), output: string(bytes.TrimSpace(out)), err: err}
	}
	return out, nil
}

// interruptedAttempts bounds the runs of one iptables command whose table
// read was interrupted (upstream's proxyutil.MaxAttemptsEINTR is 5 too).
const interruptedAttempts = 5

// tableInitInterrupted tells whether iptables failed before it read its
// table because the kernel's call returned EINTR: exit status 3 and
// "can't initialize iptables table `nat': Interrupted system call" (seen
// with iptables-legacy 1.8.9 on Debian's kernel 6.1 under emulation, on a
// namespace's first use of nat). Nothing was changed then.
func tableInitInterrupted(err error, out []byte) bool {
	var exitErr *exec.ExitError
	return errors.As(err, &exitErr) && exitErr.ExitCode() == 3 &&
		bytes.Contains(out, []byte("can't initialize")) && bytes.Contains(out, []byte("Interrupted system call"))
}

// programs are the host programs the runner runs.
func (r *ExecRunner) programs() []string {
	p := []string{r.binary("iptables"), r.binary("iptables-save"), r.binary("iptables-restore")}
	if r.netns != "" {
		p = append(p, hostprog.IP)
	}
	return p
}

func (r *ExecRunner) command(bin string, args ...string) *exec.Cmd {
	if r.observe != nil {
		r.observe(bin)
	}
	if r.netns == "" {
		return exec.Command(bin, args...)
	}
	return exec.Command("ip", append([]string{"netns", "exec", r.netns, bin}, args...)...)
}

// commandError is a failed iptables command with its output.
type commandError struct {
	cmd, output string
	err         error
}

func (e *commandError) Error() string {
	if e.output == "" {
		return fmt.Sprintf("%s: %v", e.cmd, e.err)
	}
	return fmt.Sprintf("%s: %v: %s", e.cmd, e.err, e.output)
}

func (e *commandError) Unwrap() error { return e.err }
