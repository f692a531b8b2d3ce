package kit

import "errors"

// ErrNoOutsideClient says a target has no client outside the cluster for
// connections to a node (Workspace.Outside): on a cluster that is another
// node's host network, so a one-node cluster has none.
var ErrNoOutsideClient = errors.New("no client outside the cluster")

// ErrNoLoadBalancerAddress says the cluster gave a LoadBalancer Service no
// address within the wait (Workspace.LoadBalancerAddress): nothing on it
// assigns them, as on a cluster without a load balancer.
var ErrNoLoadBalancerAddress = errors.New("no load balancer address")
