package selfexec

import "github.com/spf13/pflag"

// The node agent's commands: what the conformance suite runs on a cluster's
// nodes through `kubectl exec` into its privileged hostNetwork pod.

// NodeAgent is `svclab node agent`: the agent pod's main process.
type NodeAgent struct{}

// NodeConntrack is `svclab node conntrack`: the node's conntrack table as JSON.
type NodeConntrack struct{}

// NodeRouteSource is `svclab node route-source IP`: the source address the
// node picks to reach IP.
type NodeRouteSource struct{ IP string }

// NodeGet is `svclab node get URL`: an HTTP GET from the node.
type NodeGet struct{ URL string }

// NodeRun is `svclab node run -- ARGV…`: a program of the node's own root
// filesystem.
type NodeRun struct{ Argv []string }

func (*NodeAgent) Subcommand() []string       { return []string{"node", "agent"} }
func (*NodeConntrack) Subcommand() []string   { return []string{"node", "conntrack"} }
func (*NodeRouteSource) Subcommand() []string { return []string{"node", "route-source"} }
func (*NodeGet) Subcommand() []string         { return []string{"node", "get"} }
func (*NodeRun) Subcommand() []string         { return []string{"node", "run"} }

func (*NodeAgent) AddFlags(*pflag.FlagSet)       {}
func (*NodeConntrack) AddFlags(*pflag.FlagSet)   {}
func (*NodeRouteSource) AddFlags(*pflag.FlagSet) {}
func (*NodeGet) AddFlags(*pflag.FlagSet)         {}
func (*NodeRun) AddFlags(*pflag.FlagSet)         {}

// Args implements Positional.
func (n *NodeRouteSource) Args() []string { return []string{n.IP} }

// Args implements Positional.
func (n *NodeGet) Args() []string { return []string{n.URL} }

// Args implements Positional.
func (n *NodeRun) Args() []string { return append([]string{"--"}, n.Argv...) }
