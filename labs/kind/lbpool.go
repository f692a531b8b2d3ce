package kind

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/svclab/svclab/internal/cmdrun"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
	"github.com/svclab/svclab/labs/kind/internal/images"
	"github.com/svclab/svclab/labs/kind/loadbalancer"
	"github.com/svclab/svclab/labs/podnet"
)

// kindNetwork is the Docker network kind puts every cluster's nodes on
// (kind's KIND_EXPERIMENTAL_DOCKER_NETWORK names another).
func kindNetwork() string {
	if n := os.Getenv("KIND_EXPERIMENTAL_DOCKER_NETWORK"); n != "" {
		return n
	}
	return "kind"
}

// lbBlockBits is the size of one cluster's load balancer pool: a /27.
const lbBlockBits = 27

// LoadBalancerPool chooses a cluster's load balancer pool in the kind
// network's IPv4 subnet: the highest /27 block (as MetalLB's guide for
// kind takes addresses from the top of that subnet, far from the node
// addresses Docker hands out from the bottom) that no other cluster of
// svclab's holds, without the subnet's broadcast address. taken are the
// other clusters' pools.
func LoadBalancerPool(subnet netip.Prefix, taken []string) (podnet.AddrRange, netip.Prefix, error) {
	subnet = subnet.Masked()
	if !subnet.Addr().Is4() || subnet.Bits() > 24 {
		return podnet.AddrRange{}, netip.Prefix{}, fmt.Errorf("the kind network's subnet %s is not an IPv4 /24 or larger: no room for a load balancer pool", subnet)
	}
	all := podnet.RangeOf(subnet)
	block := all.Last
	for i := 0; i < 4; i++ { // the top four /27s, never the subnet's first
		p := netip.PrefixFrom(block, lbBlockBits).Masked()
		r := podnet.RangeOf(p)
		if r.Last == all.Last {
			r.Last = r.Last.Prev()
		}
		used := false
		for _, t := range taken {
			if tr, err := podnet.ParseAddrRange(t); err == nil && (tr.Contains(r.First) || tr.Contains(r.Last) || r.Contains(tr.First)) {
				used = true
			}
		}
		if !used {
			return r, p, nil
		}
		block = p.Addr().Prev()
	}
	return podnet.AddrRange{}, netip.Prefix{}, fmt.Errorf("the top four /27 blocks of the kind network %s are other clusters' load balancer pools (%s)", subnet, strings.Join(taken, ", "))
}

// kindSubnet is the IPv4 subnet of the kind network.
func kindSubnet(ctx context.Context, d *dockerhost.Daemon) (netip.Prefix, error) {
	out, err := d.Command("network", "inspect", kindNetwork(), "--format", `{{range .IPAM.Config}}{{.Subnet}} {{end}}`).Text(ctx)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("docker network inspect %s: %w", kindNetwork(), err)
	}
	for _, f := range strings.Fields(out) {
		if p, err := netip.ParsePrefix(f); err == nil && p.Addr().Is4() {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("docker network %s has no IPv4 subnet (%q)", kindNetwork(), out)
}

// setUpLoadBalancer chooses the cluster's pool, routes it to the
// control-plane node where svclab's dockerd runs (in its namespace, as a
// netns lab's router sends the pool to the first node: kube-proxy there
// takes the packets for the Services' addresses), and installs the
// svclab-loadbalancer Deployment.
func setUpLoadBalancer(ctx context.Context, d *dockerhost.Daemon, c *Cluster, cp nodes.Node, out io.Writer) error {
	subnet, err := kindSubnet(ctx, d)
	if err != nil {
		return err
	}
	var taken []string
	if others, err := List(ctx); err == nil {
		for _, o := range others {
			if o.Name != c.Name && o.LoadBalancerPool != "" {
				taken = append(taken, o.LoadBalancerPool)
			}
		}
	}
	pool, block, err := LoadBalancerPool(subnet, taken)
	if err != nil {
		return err
	}
	c.LoadBalancerPool = pool.String()
	if d.Managed {
		ip, _, err := cp.IP()
		if err != nil {
			return fmt.Errorf("the address of %s: %w", cp, err)
		}
		if err := cmdrun.Command("ip", "-n", dockerhost.Namespace, "route", "replace", block.String(), "via", ip).Run(ctx); err != nil {
			return fmt.Errorf("routing the load balancer pool %s to %s: %w", block, cp, err)
		}
		c.LoadBalancerRoute = block.String() + " via " + ip
	}
	manifest, err := loadbalancer.Manifest(loadbalancer.ManifestParams{Image: images.Svclab, Pool: c.LoadBalancerPool,
		APIServerHost: c.Name + "-control-plane", APIServerPort: "6443"})
	if err != nil {
		return err
	}
	if err := kubectlApply(cp, manifest); err != nil {
		return err
	}
	if _, err := kubectl(cp, "", "-n", "kube-system", "rollout", "status", "deployment/svclab-loadbalancer", "--timeout=2m"); err != nil {
		return err
	}
	route := "reachable from the nodes and pods"
	if c.LoadBalancerRoute != "" {
		route = "routed " + c.LoadBalancerRoute + " in network namespace " + dockerhost.Namespace
	}
	fmt.Fprintf(out, "load balancer: pool %s (%s)\n", pool, route)
	return nil
}

// removeLoadBalancerRoute deletes the pool's route from svclab's dockerd's
// namespace (gone anyway when the daemon stops with its last cluster).
func removeLoadBalancerRoute(ctx context.Context, c *Cluster) {
	if c == nil || c.LoadBalancerRoute == "" {
		return
	}
	if _, err := os.Stat("/run/netns/" + dockerhost.Namespace); err != nil {
		return
	}
	args := append([]string{"ip", "-n", dockerhost.Namespace, "route", "del"}, strings.Fields(c.LoadBalancerRoute)...)
	cmdrun.Command(args...).Run(ctx)
}
