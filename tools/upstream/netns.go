package upstream

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"

	"github.com/vishvananda/netlink"
)

// netnsEnv marks a process that already runs in its own network namespace.
const netnsEnv = "SVCLAB_UPSTREAM_NETNS"

// NodeAddresses are the interface addresses of the comparison's network
// namespace besides 127.0.0.1 and ::1 on lo: the default node IPs and a
// second address of each family, so that --nodeport-addresses cases
// resolve the same everywhere.
var NodeAddresses = []string{DefaultNodeIP + "/24", "172.18.0.2/16", DefaultNodeIPv6 + "/64", "fd00:172:18::2/64"}

// InPrivateNetns reports whether this process runs in the namespace
// ReexecInNetns made.
func InPrivateNetns() bool { return os.Getenv(netnsEnv) == "1" }

// ReexecInNetns runs this program again in a new network namespace (with a
// new user namespace when not root) and returns its exit code. Upstream's
// proxier touches the kernel around its fake iptables (interface addresses,
// nfacct counters, conntrack cleanup); in a namespace of its own that never
// reaches the host, and the namespace's addresses are the same on every
// machine.
func ReexecInNetns() (int, error) {
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("starting the tests in a new network namespace: %w", err)
	}
	return 0, nil
}

// SetUpNetns brings lo up and adds NodeAddresses to it (a dummy interface
// would do too, but not every kernel has the dummy driver; the proxier only
// lists addresses). Call it only inside the namespace ReexecInNetns made.
func SetUpNetns() error {
	if !InPrivateNetns() {
		return errors.New("not in the private network namespace")
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	for _, a := range NodeAddresses {
		ip, ipnet, err := net.ParseCIDR(a)
		if err != nil {
			return err
		}
		ipnet.IP = ip
		// Fuzz workers run in their coordinator's namespace, already set
		// up: an address that exists is fine.
		if err := netlink.AddrAdd(lo, &netlink.Addr{IPNet: ipnet}); err != nil && !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("address %s on lo: %w", a, err)
		}
	}
	return nil
}
