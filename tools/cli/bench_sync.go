package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
)

// benchSyncProgram is the measurement `svclab bench sync` runs: built by
// `make bench-sync` from tools/upstream (it links k8s.io/kubernetes, which
// the svclab binary does not), next to svclab.
const benchSyncProgram = "svclab-bench-sync"

// newBenchSync is `svclab bench sync`: svclab's proxy and upstream
// kube-proxy's proxier of one mode, event to kernel, side by side.
func newBenchSync() *cobra.Command {
	var (
		mode, output, program, ipt  string
		services, endpoints, rounds int
		fullResyncs                 int
	)
	cmd := &cobra.Command{
		Use:   "sync --mode iptables|nftables|ipvs [--services N] [--endpoints E] [--changes K] [--full-resyncs F] [-o table|json]",
		Short: "Time svclab's proxy and upstream kube-proxy's, same mode, from an event to the change in the kernel",
		Long: "Runs svclab's proxy and upstream kube-proxy v1.36.4's proxier of the same mode, each in a process " +
			"and a network namespace of its own, against the real kernel (iptables-restore, nft), fed the same generated " +
			"cluster (N ClusterIP Services of E endpoints each, every tenth a NodePort), one step after the other, " +
			"the side that goes first alternating (--iptables legacy|nft makes both run that backend's iptables): the cold sync, then --changes times each of one endpoint changed, " +
			"one Service added and nothing changed (an update that changes nothing), and --full-resyncs times the hourly full resync " +
			"(svclab's forced full sync; upstream's forceSyncProxyRules, a plain sync for its IPVS proxier). Each is timed from the event to " +
			"the change seen in the kernel (iptables -t nat -S of its chain, nft list chain or nft get element): p50 " +
			"and p95, the programs each proxy ran per sync, and each process's RSS and Go heap. The measurement is " +
			"the program " + benchSyncProgram + " (tools/upstream: it links k8s.io/kubernetes, which svclab does not): " +
			"`sudo make bench-sync` builds it next to svclab and runs this. ipvs (both sides' IPVS proxiers: " +
			"virtual servers and destinations over netlink, ipsets, iptables; the check asks the kernel for the changed " +
			"destination or the new virtual server over netlink, as ipvsadm -Ln -t VIP:PORT) runs, on a kernel without IPVS, " +
			"inside svclab's VM (Debian's stock kernel under qemu, as `svclab vm run`): " + benchSyncProgram + " runs itself there. " +
			"Under TCG emulation compare the ratios only: the absolute times are not a real node's; the table says so. " +
			"The netlink calls each IPVS proxy made per sync are counted as \"netlink\" among the programs.",
		Example: "  sudo make bench-sync SYNC_MODE=nftables SYNC_SERVICES=1000\n" +
			"  sudo svclab bench sync --mode iptables --services 10000 --endpoints 10 -o json\n" +
			"  sudo svclab bench sync --mode ipvs --services 1000 --endpoints 10",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := benchSyncPath(program)
			if err != nil {
				return err
			}
			run := exec.Command(path, benchSyncArgs(mode, services, endpoints, rounds, fullResyncs, ipt, output)...)
			run.Stdout, run.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := run.Run(); err != nil {
				return fmt.Errorf("bench sync: %s: %w", path, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&mode, "mode", "iptables", "iptables, nftables or ipvs (in svclab's VM when this kernel has no IPVS)")
	f.IntVar(&services, "services", 0, "Services in the generated cluster (0: "+benchSyncProgram+"'s default, 10000; 1000 for ipvs, emulated in the VM)")
	f.IntVar(&endpoints, "endpoints", 10, "endpoints per Service")
	f.IntVar(&rounds, "changes", 20, "changes of each kind timed (p50 and p95 over them)")
	f.IntVar(&fullResyncs, "full-resyncs", 3, "hourly full resyncs timed, nothing changed (a minute or more each at 10,000 Services)")
	f.StringVar(&ipt, "iptables", "", "iptables mode's binaries, for both sides: the host's (default), legacy or nft")
	f.StringVarP(&output, "output", "o", "table", "table or json")
	f.StringVar(&program, "program", "", "the "+benchSyncProgram+" to run (default: the one next to svclab)")
	return cmd
}

// benchSyncArgs are the flags `svclab bench sync` passes on to
// benchSyncProgram; --services 0 leaves the mode's default to it.
func benchSyncArgs(mode string, services, endpoints, changes, fullResyncs int, iptables, output string) []string {
	return []string{"--mode", mode, "--services", strconv.Itoa(services), "--endpoints", strconv.Itoa(endpoints),
		"--changes", strconv.Itoa(changes), "--full-resyncs", strconv.Itoa(fullResyncs), "--iptables", iptables, "-o", output}
}

// benchSyncPath is --program, or benchSyncProgram next to this binary.
func benchSyncPath(program string) (string, error) {
	if program == "" {
		self, err := os.Executable()
		if err != nil {
			return "", err
		}
		program = filepath.Join(filepath.Dir(self), benchSyncProgram)
	}
	if _, err := os.Stat(program); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("bench sync: no %s: build it with `sudo make bench-sync` (or give --program)", program)
	}
	return program, nil
}
