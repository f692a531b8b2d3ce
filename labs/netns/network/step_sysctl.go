package network

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/svclab/svclab/internal/nsthread"
)

// SetSysctl writes a per-namespace sysctl inside a lab namespace. Key is the
// path under /proc/sys with '/' separators (net/ipv4/ip_forward), so that
// interface names with dots stay unambiguous. Only keys under net/ are
// accepted: those are the ones the kernel keeps per network namespace.
//
//	ip netns exec <NS> sysctl -qw <key with dots>=<Value>
type SetSysctl struct {
	NS, Key, Value string
}

func (s SetSysctl) Namespace() string { return s.NS }
func (s SetSysctl) Command() string {
	return fmt.Sprintf("ip netns exec %s sysctl -qw %s=%s", s.NS, strings.ReplaceAll(s.Key, "/", "."), s.Value)
}

func (s SetSysctl) apply(x *executor) error {
	if !strings.HasPrefix(s.Key, "net/") || strings.Contains(s.Key, "..") {
		return fmt.Errorf("sysctl %s: only per-namespace keys under net/ may be set", s.Key)
	}
	c, err := x.conn(s.NS)
	if err != nil {
		return err
	}
	return nsthread.Do(s.NS, c.ns, func() error { return writeSysctl(s.Key, s.Value) })
}

func writeSysctl(key, value string) error {
	path := "/proc/sys/" + key
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func readSysctl(key string) (string, error) {
	b, err := os.ReadFile("/proc/sys/" + key)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// bridgeNFKey makes bridged IPv4 traffic traverse iptables, which kube-proxy
// needs when a pod reaches a Service whose endpoint sits on the same bridge;
// bridgeNFKeyIPv6 does the same for IPv6 and ip6tables (kubeadm's preflight
// wants both on a dual-stack node).
const (
	bridgeNFKey     = "net/bridge/bridge-nf-call-iptables"
	bridgeNFKeyIPv6 = "net/bridge/bridge-nf-call-ip6tables"
)

// EnableBridgeNF sets net.bridge.bridge-nf-call-iptables=1 in a node
// namespace. The knob is per network namespace since Linux 5.3 (on 6.18 a
// new namespace starts with it at 1 and a write there leaves the host's
// value alone); on an older kernel it is host-wide, and the step refuses to
// write it rather than change the host.
//
// With IPv6 set it is net.bridge.bridge-nf-call-ip6tables.
//
//	ip netns exec <NS> sysctl -qw net.bridge.bridge-nf-call-iptables=1
type EnableBridgeNF struct {
	NS   string
	IPv6 bool
}

func (s EnableBridgeNF) Namespace() string { return s.NS }
func (s EnableBridgeNF) Command() string {
	return SetSysctl{NS: s.NS, Key: s.key(), Value: "1"}.Command()
}

// key is the sysctl of the step's family.
func (s EnableBridgeNF) key() string {
	if s.IPv6 {
		return bridgeNFKeyIPv6
	}
	return bridgeNFKey
}

func (s EnableBridgeNF) apply(x *executor) error {
	loadBridgeNetfilter()
	c, err := x.conn(s.NS)
	if err != nil {
		return err
	}
	key := s.key()
	return nsthread.Do(s.NS, c.ns, func() error {
		v, err := readSysctl(key)
		if err != nil {
			return fmt.Errorf("read %s: %w (is br_netfilter loaded on the host?)", key, err)
		}
		if v == "1" {
			return nil
		}
		if !kernelAtLeast(5, 3) {
			return fmt.Errorf("%s is 0 and is host-wide on this kernel (before 5.3); set it on the host yourself, svclab does not change host-wide knobs", key)
		}
		return writeSysctl(key, "1")
	})
}

// loadBridgeNetfilter loads br_netfilter when the kernel has it as a module
// not yet loaded (as a kubeadm node's set-up does): without it, bridged pod
// traffic skips iptables. It creates no device and changes no namespace's
// settings; a kernel without the module is reported by the step.
//
//	modprobe br_netfilter
func loadBridgeNetfilter() {
	if _, err := os.Stat("/sys/module/br_netfilter"); err == nil {
		return
	}
	exec.Command("modprobe", "-q", "br_netfilter").Run() //nolint:errcheck // the sysctl read says if it is missing
}

// kernelAtLeast compares the running kernel's major.minor version.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	var ma, mi int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
