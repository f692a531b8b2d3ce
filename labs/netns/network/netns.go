package network

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nsthread"
)

// netnsRunDir is where iproute2 keeps named namespaces; svclab uses the
// same place so that `ip netns exec` and `ip -n` work on lab namespaces.
const netnsRunDir = "/run/netns"

func netnsPath(name string) string { return filepath.Join(netnsRunDir, name) }

// Do runs fn on an OS thread that has been switched into the named lab
// namespace, and switches that thread back before returning (the model is
// containernetworking/plugins pkg/ns NetNS.Do). Everything fn does on its
// own goroutine — opening sockets, writing /proc/sys/net, starting a
// process with os/exec — happens inside the namespace; goroutines that fn
// starts run elsewhere, in the host's namespace, so fn must not hand work
// to them. If the thread cannot be switched back it is discarded rather
// than returned to the Go scheduler.
//
// Do only enters svclab's namespaces (names starting with NamespacePrefix).
func Do(nsName string, fn func() error) error {
	if !strings.HasPrefix(nsName, NamespacePrefix) {
		return fmt.Errorf("network.Do: %q is not a svclab namespace (want the prefix %q)", nsName, NamespacePrefix)
	}
	target, err := netns.GetFromPath(netnsPath(nsName))
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", nsName, err)
	}
	defer target.Close()
	return nsthread.Do(nsName, target, fn)
}

var runDirOnce struct {
	sync.Mutex
	done bool
}

// ensureRunDir prepares /run/netns as `ip netns add` does: the directory
// exists and is a shared mount point, so that namespaces bound under it are
// seen by other mount namespaces (`ip netns exec` makes one per command).
func ensureRunDir() error {
	runDirOnce.Lock()
	defer runDirOnce.Unlock()
	if runDirOnce.done {
		return nil
	}
	if err := os.MkdirAll(netnsRunDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", netnsRunDir, err)
	}
	madeMount := false
	for {
		err := unix.Mount("", netnsRunDir, "none", unix.MS_SHARED|unix.MS_REC, "")
		if err == nil {
			break
		}
		if err != unix.EINVAL || madeMount {
			return fmt.Errorf("mount --make-rshared %s: %w", netnsRunDir, err)
		}
		// Not a mount point yet: bind it onto itself, then retry.
		if err := unix.Mount(netnsRunDir, netnsRunDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mount --rbind %s %s: %w", netnsRunDir, netnsRunDir, err)
		}
		madeMount = true
	}
	runDirOnce.done = true
	return nil
}

// createNamedNetns is `ip netns add name`: a new network namespace kept
// alive by a bind mount at /run/netns/<name>. The calling thread is not
// moved; the namespace is made on a throw-away switched thread.
func createNamedNetns(name string) error {
	if err := ensureRunDir(); err != nil {
		return err
	}
	path := netnsPath(name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("network namespace %s already exists", name)
		}
		return fmt.Errorf("create %s: %w", path, err)
	}
	f.Close()
	err = nsthread.OnSwitchedThread(
		func() error {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
			}
			return nil
		},
		func() error {
			src := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
			if err := unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("mount --bind %s %s: %w", src, path, err)
			}
			return nil
		})
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("ip netns add %s: %w", name, err)
	}
	return nil
}

// deleteNamedNetns is `ip netns delete name`, except that a missing
// namespace is not an error. The namespace itself goes away once nothing
// uses it any more (processes inside it, open handles).
func deleteNamedNetns(name string) error {
	path := netnsPath(name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("ip netns delete %s: umount %s: %w", name, path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("ip netns delete %s: %w", name, err)
	}
	return nil
}

// HostNamespaceExists reports whether the kernel has host's network
// namespace in lab (its name under /run/netns): what a pod that runs no
// process is, so its status says Running only while it is there.
func HostNamespaceExists(lab, host string) bool {
	return namespaceExists(NamespaceName(lab, host))
}

// namespaceExists reports whether /run/netns/<name> exists.
func namespaceExists(name string) bool {
	_, err := os.Lstat(netnsPath(name))
	return err == nil
}

// listNamespaces returns the names under /run/netns that start with prefix,
// sorted.
func listNamespaces(prefix string) ([]string, error) {
	entries, err := os.ReadDir(netnsRunDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", netnsRunDir, err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// readTag reads the svclab tag of a namespace (the alias of its lo); ok is
// false when the namespace cannot be opened or carries no tag (for example
// one left half-made by a crash).
func readTag(name string) (t tag, ok bool) {
	h, err := netns.GetFromPath(netnsPath(name))
	if err != nil {
		return tag{}, false
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		return tag{}, false
	}
	defer nl.Close()
	lo, err := nl.LinkByName("lo")
	if err != nil {
		return tag{}, false
	}
	return parseTag(lo.Attrs().Alias)
}

// NetnsCommand returns a command that runs argv inside the named lab
// namespace: `ip netns exec <nsName> argv...`.
func NetnsCommand(nsName string, argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", nsName}, argv...)...)
}
