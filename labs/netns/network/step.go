package network

import (
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"
	nlraw "github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Step is one change to one lab namespace. Plans are lists of steps; the
// executor applies them in order.
type Step interface {
	// Namespace is the lab namespace the step changes.
	Namespace() string
	// Command is the shell command that does the same thing.
	Command() string
	apply(x *executor) error
}

// StepError says which step of a plan failed.
type StepError struct {
	Index int // 0-based position in the plan
	Total int
	Step  Step
	Err   error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %d/%d in %s (%s): %v", e.Index+1, e.Total, e.Step.Namespace(), e.Step.Command(), e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// nsConn is an open lab namespace: its handle and a netlink socket inside
// it, and, once a step asks for it, a NETLINK_ROUTE socket of its own for
// requests the netlink package has no call for.
type nsConn struct {
	ns    netns.NsHandle
	nl    *netlink.Handle
	route *nlraw.SocketHandle
}

// executor applies steps. It keeps one netlink handle per namespace and
// remembers the namespaces it created, so that a failed plan can be undone.
//
// It also keeps every link it has looked up: no step renames, moves or
// deletes a link, or changes its MAC address, so a link found once is the
// same link (index and address) for the rest of the plan. A node's VXLAN
// mesh looks up its one VXLAN device for each of its peers' FDB entry,
// neighbour and route: about 100 × 99 × 3 RTM_GETLINK round trips for a
// 100-node lab's create, 7% of its CPU (`perf`), before.
type executor struct {
	conns   map[string]*nsConn
	links   map[linkKey]netlink.Link
	created []string
}

// linkKey names a link in a lab namespace.
type linkKey struct{ ns, name string }

func newExecutor() *executor {
	return &executor{conns: map[string]*nsConn{}, links: map[linkKey]netlink.Link{}}
}

// run applies steps in order and stops at the first failure.
func (x *executor) run(steps []Step) error {
	for i, s := range steps {
		if err := s.apply(x); err != nil {
			return &StepError{Index: i, Total: len(steps), Step: s, Err: err}
		}
	}
	return nil
}

// conn opens (once) the named namespace and a netlink socket inside it.
func (x *executor) conn(name string) (*nsConn, error) {
	if c, ok := x.conns[name]; ok {
		return c, nil
	}
	h, err := netns.GetFromPath(netnsPath(name))
	if err != nil {
		return nil, fmt.Errorf("open network namespace %s: %w", name, err)
	}
	nl, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("netlink socket in %s: %w", name, err)
	}
	c := &nsConn{ns: h, nl: nl}
	x.conns[name] = c
	return c, nil
}

// routeSocket is the namespace's own NETLINK_ROUTE socket, opened once.
func (x *executor) routeSocket(name string) (*nlraw.SocketHandle, error) {
	c, err := x.conn(name)
	if err != nil {
		return nil, err
	}
	if c.route == nil {
		s, err := nlraw.GetNetlinkSocketAt(c.ns, netns.None(), unix.NETLINK_ROUTE)
		if err != nil {
			return nil, fmt.Errorf("netlink socket in %s: %w", name, err)
		}
		c.route = &nlraw.SocketHandle{Socket: s}
	}
	return c.route, nil
}

// link finds a link by name in a namespace (asked of the kernel once).
func (x *executor) link(ns, name string) (*nsConn, netlink.Link, error) {
	c, err := x.conn(ns)
	if err != nil {
		return nil, nil, err
	}
	if l, ok := x.links[linkKey{ns, name}]; ok {
		return c, l, nil
	}
	l, err := c.nl.LinkByName(name)
	if err != nil {
		return nil, nil, fmt.Errorf("find link %s in %s: %w", name, ns, err)
	}
	x.links[linkKey{ns, name}] = l
	return c, l, nil
}

// close releases every handle.
func (x *executor) close() {
	for _, c := range x.conns {
		c.nl.Close()
		if c.route != nil {
			c.route.Close()
		}
		c.ns.Close()
	}
	clear(x.conns)
	clear(x.links)
}

// undo deletes the namespaces this executor created, newest first.
func (x *executor) undo() error {
	x.close()
	var errs []error
	for _, name := range slices.Backward(x.created) {
		if err := deleteNamedNetns(name); err != nil {
			errs = append(errs, err)
		}
	}
	x.created = nil
	if len(errs) > 0 {
		return fmt.Errorf("undo: %v", errs)
	}
	return nil
}
