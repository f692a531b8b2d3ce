package network

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/svclab/svclab/labs/netns/topology"
)

// Build creates the lab: its router, its hosts, each node's pod attachment
// and the overlay between the nodes. It is all-or-nothing: when a step
// fails, the namespaces made so far are deleted and the error names the
// step. A lab of the same name must not exist (Destroy it first).
func Build(lab *topology.Lab) (*Plan, error) {
	plan, err := PlanLab(lab)
	if err != nil {
		return nil, err
	}
	if err := buildPlan(plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// buildPlan executes a plan after checking that none of it exists yet.
func buildPlan(plan *Plan) error {
	existing, err := Namespaces(plan.Lab)
	if err != nil {
		return fmt.Errorf("build lab %q: %w", plan.Lab, err)
	}
	planned := plan.Namespaces()
	for _, ns := range existing {
		if slices.Contains(planned, ns) || isTagged(ns, plan.Lab) {
			return fmt.Errorf("build lab %q: it already exists (namespace %s); destroy it first", plan.Lab, ns)
		}
	}
	if err := executePlan(plan); err != nil {
		return fmt.Errorf("build lab %q: %w", plan.Lab, err)
	}
	return nil
}

func isTagged(ns, lab string) bool {
	t, ok := readTag(ns)
	return ok && t.Lab == lab
}

// Destroy deletes every namespace of the lab: those named
// svclab-<lab>.<host> whose tag names this lab or that carry no tag (left
// half-made by a crash), and those of the older scheme svclab-<lab>-<host>
// whose tag names it (see Namespaces). No other lab's namespace has such a
// name (lab "a-b"'s are svclab-a-b.<host>), so Destroy of lab "a" never
// touches lab "a-b". Destroy needs no state, so it works after a crash, and
// a lab that is not there is not an error.
func Destroy(labName string) error {
	// A name with a dot would reach into another lab's namespaces:
	// Destroy("a.b") would take lab "a"'s pod "b.c" for its own.
	if err := topology.ValidateLabName(labName); err != nil {
		return fmt.Errorf("destroy: %w", err)
	}
	names, err := Namespaces(labName)
	if err != nil {
		return fmt.Errorf("destroy lab %q: %w", labName, err)
	}
	var errs []error
	for _, ns := range names {
		if err := deleteNamedNetns(ns); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("destroy lab %q: %w", labName, err)
	}
	return nil
}

// Namespaces lists the namespaces that belong to a lab (see Destroy for
// which those are), sorted.
func Namespaces(labName string) ([]string, error) {
	names, err := listNamespaces(labPrefix(labName))
	if err != nil {
		return nil, err
	}
	var mine []string
	for _, ns := range names {
		if t, ok := readTag(ns); ok && t.Lab != labName {
			continue
		}
		mine = append(mine, ns)
	}
	legacy, err := legacyNamespaces(labName)
	if err != nil {
		return nil, err
	}
	mine = append(mine, legacy...)
	slices.Sort(mine)
	return mine, nil
}

// legacyNamespaces are the lab's namespaces named as svclab named them
// before NamespaceSeparator, svclab-<lab>-<host> (a lab made by an older
// svclab and deleted by this one). Only those whose tag names the lab are
// its: an untagged name of that scheme may be another lab's (lab "a" with
// pod "b-c" and lab "a-b" with host "c" were both svclab-a-b-c), and so
// may a name of the current scheme that shares the prefix (svclab-a-b.c).
func legacyNamespaces(labName string) ([]string, error) {
	names, err := listNamespaces(NamespacePrefix + labName + "-")
	if err != nil {
		return nil, err
	}
	var mine []string
	for _, ns := range names {
		if t, ok := readTag(ns); ok && t.Lab == labName {
			mine = append(mine, ns)
		}
	}
	return mine, nil
}

// List returns the names of the labs that have namespaces on this machine,
// sorted. A lab is known by the tags of its namespaces; an untagged router
// namespace (svclab-<lab>.router) left by a crash counts too.
func List() ([]string, error) {
	names, err := listNamespaces(NamespacePrefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, ns := range names {
		if t, ok := readTag(ns); ok {
			seen[t.Lab] = true
		} else if lab, host, ok := SplitNamespaceName(ns); ok && host == topology.RouterName {
			seen[lab] = true
		}
	}
	labs := make([]string, 0, len(seen))
	for l := range seen {
		labs = append(labs, l)
	}
	sort.Strings(labs)
	return labs, nil
}
