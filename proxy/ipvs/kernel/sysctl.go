package kernel

import (
	"fmt"
	"os"
	"strings"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
)

// Sysctl implements Sysctls: `sysctl -n KEY` inside the namespace.
func (k *Netlink) Sysctl(key string) (string, error) {
	var out string
	err := k.inNamespace(func() error {
		b, err := os.ReadFile("/proc/sys/" + key)
		out = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("sysctl %s: %w", strings.ReplaceAll(key, "/", "."), err)
	}
	return out, nil
}

// SetSysctl implements Sysctls: `sysctl -w KEY=VALUE` inside the
// namespace.
func (k *Netlink) SetSysctl(key, value string) error {
	err := k.inNamespace(func() error { return os.WriteFile("/proc/sys/"+key, []byte(value), 0o644) })
	if err != nil {
		return fmt.Errorf("sysctl -w %s=%s: %w", strings.ReplaceAll(key, "/", "."), value, err)
	}
	return nil
}

// inNamespace runs fn with the calling goroutine's thread in k's
// namespace (/proc/sys/net is the namespace of the thread that opens it),
// on a thread of its own that is dropped if it cannot be switched back.
func (k *Netlink) inNamespace(fn func() error) error {
	if k.ns == netns.None() {
		return fn()
	}
	return nsthread.Do(k.nsName, k.ns, fn)
}
