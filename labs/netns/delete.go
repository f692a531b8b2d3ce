package netns

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/netns/network"
)

// Delete removes a lab completely: every process in its namespaces, the
// namespaces (and with them every link, address, route and rule), and its
// state. Like rm -f it succeeds when there is nothing to remove, and it
// works from what the kernel has, so a crashed lab is cleaned too, and so
// is whatever a killed command left (every namespace of the lab goes, known
// to the store or not). It waits for the lab's lock: a command changing
// the lab finishes first.
func Delete(name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("delete lab: %w", err)
	}
	st := labstore.Open(name)
	unlock, err := st.Lock(context.Background())
	if err != nil {
		return fmt.Errorf("delete lab %s: %w", name, err)
	}
	defer unlock()
	return deleteLocked(name)
}

// deleteLocked deletes the lab; the caller holds its lock, which it removes
// last.
func deleteLocked(name string) error {
	st := labstore.Open(name)
	// A delete killed half way shows as such, not as a lab with its proxies
	// gone; the next delete finishes it.
	if _, err := os.Stat(st.Dir); err == nil {
		if err := st.WriteIntent(&labstore.Intent{Op: labstore.OpDelete}); err != nil {
			return fmt.Errorf("delete lab %s: %w", name, err)
		}
	}
	crashPoint("delete:intent")
	namespaces, err := network.Namespaces(name)
	if err != nil {
		return err
	}
	process.StopInNamespaces(namespaces, 2*time.Second)
	crashPoint("delete:processes")
	var errs []error
	// The resolv.conf files before the namespaces: a delete killed in
	// between leaves namespaces, by which the next delete finds the lab.
	if err := network.RemoveResolvConfs(name); err != nil {
		errs = append(errs, err)
	}
	if err := network.Destroy(name); err != nil {
		errs = append(errs, err)
	}
	crashPoint("delete:namespaces")
	if err := st.Remove(); err != nil {
		errs = append(errs, err)
	}
	if err := st.RemoveLock(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("delete lab %s: %w", name, err)
	}
	return nil
}

// DeleteAll deletes every lab: those with state and those only the kernel
// still knows of.
func DeleteAll() ([]string, error) {
	names, err := List()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, n := range names {
		if err := Delete(n); err != nil {
			errs = append(errs, err)
		}
	}
	return names, errors.Join(errs...)
}

// List returns the names of every lab found in the state directory or as
// namespaces.
func List() ([]string, error) {
	seen := map[string]bool{}
	var names []string
	fromStore, err := labstore.List()
	if err != nil {
		return nil, err
	}
	fromKernel, err := network.List()
	if err != nil {
		return nil, err
	}
	for _, n := range append(fromStore, fromKernel...) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names, nil
}
