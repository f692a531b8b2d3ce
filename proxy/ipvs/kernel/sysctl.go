package kernel

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
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
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			done <- err
			return // the thread stays locked and dies with the goroutine
		}
		defer origin.Close()
		if err := netns.Set(k.ns); err != nil {
			done <- fmt.Errorf("enter network namespace %s: %w", k.nsName, err)
			return
		}
		ferr := fn()
		if err := netns.Set(origin); err != nil {
			done <- errors.Join(ferr, fmt.Errorf("leave network namespace %s: %w", k.nsName, err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}
