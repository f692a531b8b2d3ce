package kind

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// checkKindNetworkIPv6: kind makes the kind network with an IPv6 ULA
// subnet (fc00:f853:ccd:e793::/64 for "kind": fc00::/8 and bytes 2..7 of
// the name's sha1, pkg/cluster/internal/providers/docker/network.go) and
// keeps a network that exists as it is ("the network might already exist
// and not have ipv6"). An ipv6 or dual cluster on a kind network without
// IPv6 would fail inside kubeadm; this says why before anything starts.
// On svclab's dockerd the network and its IPv6 bridge address live in
// the daemon's namespace, never in the host's.
func checkKindNetworkIPv6(ctx context.Context, d *dockerhost.Daemon, family v1alpha4.ClusterIPFamily) error {
	if family == v1alpha4.IPv4Family {
		return nil
	}
	name := kindNetwork()
	out, err := d.Command("network", "ls", "--filter", "name=^"+name+"$", "--format", "{{.Name}} {{.IPv6}}").Text(ctx)
	if err != nil {
		return fmt.Errorf("docker network ls: %w", err)
	}
	return kindNetworkIPv6Verdict(name, family, out)
}

// kindNetworkIPv6Verdict reads `docker network ls --format "{{.Name}}
// {{.IPv6}}"` for the kind network: none (kind will make it, with IPv6)
// or one with IPv6 is fine.
func kindNetworkIPv6Verdict(name string, family v1alpha4.ClusterIPFamily, ls string) error {
	for _, line := range strings.Split(strings.TrimSpace(ls), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name && f[1] != "true" {
			return fmt.Errorf("networking.ipFamily %s: the Docker network %s has no IPv6 (it was made without); delete the clusters on it, `docker network rm %s`, and create again (kind makes it with an IPv6 subnet)", family, name, name)
		}
	}
	return nil
}
