package network

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/svclab/svclab/labs/topology"
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
	if err := execute(plan.Steps); err != nil {
		return fmt.Errorf("build lab %q: %w", plan.Lab, err)
	}
	return nil
}

func isTagged(ns, lab string) bool {
	t, ok := readTag(ns)
	return ok && t.Lab == lab
}

// Destroy deletes every namespace of the lab: those named
// svclab-<lab>-... whose tag names this lab or that carry no tag (left
// half-made by a crash). A namespace tagged for another lab whose name
// merely shares the prefix (lab "a" and lab "a-b") is left alone. Destroy
// needs no state, so it works after a crash, and a lab that is not there is
// not an error.
func Destroy(labName string) error {
	if labName == "" || strings.ContainsAny(labName, "/ ") {
		return fmt.Errorf("destroy: invalid lab name %q", labName)
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
	return mine, nil
}

// List returns the names of the labs that have namespaces on this machine,
// sorted. A lab is known by the tags of its namespaces; an untagged router
// namespace (svclab-<lab>-router) left by a crash counts too.
func List() ([]string, error) {
	names, err := listNamespaces(NamespacePrefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, ns := range names {
		if t, ok := readTag(ns); ok {
			seen[t.Lab] = true
		} else if lab, ok := strings.CutSuffix(strings.TrimPrefix(ns, NamespacePrefix), "-"+topology.RouterName); ok && lab != "" {
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
