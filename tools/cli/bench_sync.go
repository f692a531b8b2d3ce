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
	)
	cmd := &cobra.Command{
		Use:   "sync --mode iptables|nftables [--services N] [--endpoints E] [--changes K] [-o table|json]",
		Short: "Time svclab's proxy and upstream kube-proxy's, same mode, from an event to the change in the kernel",
		Long: "Runs svclab's proxy and upstream kube-proxy v1.36.4's proxier of the same mode, each in a process " +
			"and a network namespace of its own, against the real kernel (iptables-restore, nft), fed the same generated " +
			"cluster (N ClusterIP Services of E endpoints each, every tenth a NodePort), one step after the other, " +
			"the side that goes first alternating (--iptables legacy|nft makes both run that backend's iptables): the cold sync, then --changes times each of one endpoint changed, " +
			"one Service added and nothing changed (an update that changes nothing). Each is timed from the event to " +
			"the change seen in the kernel (iptables -t nat -S of its chain, nft list chain or nft get element): p50 " +
			"and p95, the programs each proxy ran per sync, and each process's RSS and Go heap. The measurement is " +
			"the program " + benchSyncProgram + " (tools/upstream: it links k8s.io/kubernetes, which svclab does not): " +
			"`sudo make bench-sync` builds it next to svclab and runs this. ipvs is not measured yet.",
		Example: "  sudo make bench-sync MODE=nftables SERVICES=1000\n" +
			"  sudo svclab bench sync --mode iptables --services 10000 --endpoints 10 -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := benchSyncPath(program)
			if err != nil {
				return err
			}
			run := exec.Command(path, "--mode", mode, "--services", strconv.Itoa(services),
				"--endpoints", strconv.Itoa(endpoints), "--changes", strconv.Itoa(rounds), "--iptables", ipt, "-o", output)
			run.Stdout, run.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := run.Run(); err != nil {
				return fmt.Errorf("bench sync: %s: %w", path, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&mode, "mode", "iptables", "iptables or nftables")
	f.IntVar(&services, "services", 10000, "Services in the generated cluster")
	f.IntVar(&endpoints, "endpoints", 10, "endpoints per Service")
	f.IntVar(&rounds, "changes", 20, "changes of each kind timed (p50 and p95 over them)")
	f.StringVar(&ipt, "iptables", "", "iptables mode's binaries, for both sides: the host's (default), legacy or nft")
	f.StringVarP(&output, "output", "o", "table", "table or json")
	f.StringVar(&program, "program", "", "the "+benchSyncProgram+" to run (default: the one next to svclab)")
	return cmd
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
