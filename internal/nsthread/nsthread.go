// Package nsthread runs code with one OS thread switched into a network
// namespace and back: the one place svclab calls setns(2). A socket, a
// /proc/sys/net file or a netlink handle belongs to the namespace of the
// thread that opens it, so work that must happen inside a namespace runs on
// a goroutine locked to a thread switched there (the model is
// containernetworking/plugins pkg/ns NetNS.Do).
package nsthread

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Do runs fn on an OS thread switched into the open namespace target
// (named nsName in errors), and switches it back; see OnSwitchedThread.
func Do(nsName string, target netns.NsHandle, fn func() error) error {
	enter := func() error {
		if err := netns.Set(target); err != nil {
			return fmt.Errorf("enter network namespace %s: %w", nsName, err)
		}
		cur, err := netns.Get()
		if err != nil {
			return fmt.Errorf("check network namespace %s: %w", nsName, err)
		}
		defer cur.Close()
		if !cur.Equal(target) {
			return fmt.Errorf("enter network namespace %s: the thread is in %s instead", nsName, cur.UniqueId())
		}
		return nil
	}
	return OnSwitchedThread(enter, fn)
}

// OnSwitchedThread runs enter then fn on a fresh goroutine locked to its OS
// thread, and afterwards puts the thread back into the namespace it started
// in. enter is what moves the thread (setns or unshare). When the thread
// cannot be put back it stays locked, and the Go runtime ends it together
// with the goroutine, so no other goroutine ever runs in a lab namespace by
// accident. A panic in fn is returned as an error after the switch back.
func OnSwitchedThread(enter, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open the current network namespace: %w", err)
			return
		}
		defer origin.Close()
		var ferr error
		func() {
			defer func() {
				if r := recover(); r != nil {
					ferr = fmt.Errorf("panic inside a network namespace: %v", r)
				}
			}()
			if ferr = enter(); ferr != nil {
				return
			}
			ferr = fn()
		}()
		if err := netns.Set(origin); err != nil {
			// Leave the thread locked: it dies with this goroutine.
			done <- errors.Join(ferr, fmt.Errorf("switch back to the original network namespace: %w (thread discarded)", err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}
