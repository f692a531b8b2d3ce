package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/status"
	"github.com/svclab/svclab/internal/vm"
)

// newVM is `svclab vm`: commands in a VM that boots Debian's stock kernel,
// for kernel features the host lacks (IPVS).
func newVM() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vm",
		Short: "Run a command in a VM with Debian's stock kernel (IPVS where the host kernel has none)",
		Example: "  sudo svclab vm run -- ipvsadm -Ln\n" +
			"  sudo svclab vm prepare",
		Long: "Boots Debian's stock kernel under qemu (KVM when it really works, else TCG) with a root filesystem made " +
			"from Debian packages (iproute2, iptables legacy and nft, ipset, ipvsadm, conntrack, curl, tcpdump…), " +
			"runs one command in it as root and powers off. The VM has no network device. Images are cached under " +
			vm.CacheDir() + ".",
	}
	cmd.AddCommand(newVMRun(), newVMPrepare())
	return cmd
}

func newVMRun() *cobra.Command {
	var (
		shares, env []string
		opts        vm.Options
		console     bool
		verbose     bool
	)
	cmd := &cobra.Command{
		Use:   "run [--share HOST[:GUEST][:ro]]… [--env K=V]… -- CMD [ARGS…]",
		Short: "Boot the VM, run CMD in it as root, pass its output and exit code through",
		Long: "Boots the VM and runs CMD as root; CMD's stdout and stderr come back separately and its exit code is " +
			"svclab's. --share mounts a host directory in the guest (at the same path when GUEST is left out; :ro for " +
			"read-only); the working directory is the host's when a share holds it. This svclab binary is " +
			"/usr/local/bin/svclab in the guest. The first run builds the cached image (see `svclab vm prepare`).",
		Example: "  svclab vm run -- ipvsadm -Ln\n" +
			"  svclab vm run --share . -- sh -c 'ipvsadm -A -t 10.0.0.1:80 -s rr && ipvsadm -Ln'\n" +
			"  svclab vm run --share $PWD --timeout 30m -- go test ./proxy/ipvs/",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Shares, err = parseShares(shares); err != nil {
				return err
			}
			opts.Env = map[string]string{}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--env %q: want KEY=VALUE", kv)
				}
				opts.Env[k] = v
			}
			if opts.Binary, err = os.Executable(); err != nil {
				opts.Binary = ""
			}
			opts.Command = args
			opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if console {
				opts.Console = cmd.ErrOrStderr()
			}
			if verbose {
				opts.Log = cmd.ErrOrStderr()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if err := hostprog.Ensure(ctx, cmd.ErrOrStderr(), hostprog.Needs(hostprog.VM)...); err != nil {
				return err
			}
			// A cold cache is built first, with its progress shown.
			if _, err := vm.Prepare(ctx, vm.PrepareOptions{Log: cmd.ErrOrStderr()}); err != nil {
				return err
			}
			code, err := vm.Run(ctx, opts)
			if err != nil {
				return err
			}
			if code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // flags after CMD are CMD's
	f.StringArrayVar(&shares, "share", nil, "host directory to mount in the guest: HOST[:GUEST][:ro] (repeatable)")
	f.StringArrayVar(&env, "env", nil, "KEY=VALUE for the command's environment (repeatable)")
	f.StringVar(&opts.Dir, "dir", "", "working directory in the guest (default: the host's when shared, else /root)")
	f.DurationVar(&opts.Timeout, "timeout", 30*time.Minute, "limit for the whole run, boot included; qemu is killed then")
	f.IntVar(&opts.Memory, "memory", 2048, "guest memory in MiB")
	f.IntVar(&opts.CPUs, "cpus", 0, "guest CPUs (default: 2, at most the host's)")
	f.BoolVar(&console, "console", false, "show the serial console (kernel and init messages) on stderr")
	f.BoolVarP(&verbose, "verbose", "v", false, "say which kernel and accelerator the VM uses")
	return cmd
}

// parseShares reads --share values: HOST, HOST:GUEST, HOST:ro, HOST:GUEST:ro.
func parseShares(specs []string) ([]vm.Share, error) {
	var shares []vm.Share
	for _, spec := range specs {
		s := vm.Share{}
		rest := spec
		if r, ok := strings.CutSuffix(rest, ":ro"); ok {
			rest, s.ReadOnly = r, true
		} else if r, ok := strings.CutSuffix(rest, ":rw"); ok {
			rest = r
		}
		host, guest, _ := strings.Cut(rest, ":")
		if host == "" {
			return nil, fmt.Errorf("--share %q: want HOST[:GUEST][:ro]", spec)
		}
		abs, err := filepath.Abs(host)
		if err != nil {
			return nil, err
		}
		if guest == "" {
			guest = abs
		}
		s.HostPath, s.GuestPath = abs, guest
		shares = append(shares, s)
	}
	return shares, nil
}

func newVMPrepare() *cobra.Command {
	var refresh, noBoot bool
	cmd := &cobra.Command{
		Use:     "prepare",
		Short:   "Install qemu if missing, build the cached VM image, pick the accelerator and boot it once",
		Example: "  sudo svclab vm prepare   # qemu, the cached VM image with Debian's kernel, one boot",
		Long: "Installs the host's Debian packages the VM needs (qemu-system-x86, xz-utils; see internal/hostprog) when missing (as root), " +
			"builds the image from Debian packages (kernel from linux-image-amd64, never installed on the host) or " +
			"reuses the cached one, probes KVM, and boots `true` once to show the boot-to-exit time.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return prepareVM(ctx, status.New(cmd.OutOrStdout()), refresh, noBoot)
		},
	}
	cmd.Flags().BoolVar(&refresh, "refresh", false, "check the package versions with apt even if the package lists did not change")
	cmd.Flags().BoolVar(&noBoot, "no-boot", false, "do not boot the VM")
	return cmd
}

// prepareVM is vm prepare's steps, each announced on progress as it
// starts (on a terminal with its time running) and marked as it ends: the
// host's programs, the image (vm.Prepare's own steps inside), the
// accelerator, and one boot unless noBoot.
func prepareVM(ctx context.Context, progress *status.Printer, refresh, noBoot bool) error {
	needs := hostprog.Needs(hostprog.VM)
	host := progress.Start("check the host's programs")
	if err := hostprog.Ensure(ctx, progress, needs...); err != nil {
		host.Fail()
		return err
	}
	host.Done(strings.Join(needs, " "))
	image := progress.Start("prepare the VM image")
	img, err := vm.Prepare(ctx, vm.PrepareOptions{Log: progress, Refresh: refresh})
	if err != nil {
		image.Fail()
		return err
	}
	how := "reused the cached image"
	if img.Built {
		how = "built the image"
	}
	image.Done(fmt.Sprintf("%s %s: kernel %s (%s), %d packages", how, img.Dir, img.KernelVersion, filepath.Base(img.Kernel), len(img.Packages)))
	accelStep := progress.Start("pick the accelerator")
	accel, why := vm.Accelerator(ctx, vm.CacheDir(), img)
	accelStep.Done(fmt.Sprintf("%s (%s)", accel, why))
	if noBoot {
		return nil
	}
	return progress.Run("boot the VM and run `true`", func() error {
		code, err := vm.Run(ctx, vm.Options{Command: []string{"true"}, Binary: "-", Timeout: 5 * time.Minute})
		if err == nil && code != 0 {
			err = fmt.Errorf("`true` in the VM exited %d", code)
		}
		return err
	})
}
