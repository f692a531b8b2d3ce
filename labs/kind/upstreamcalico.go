package kind

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/svclab/svclab/labs/kind/internal/cache"
	"github.com/svclab/svclab/labs/kind/internal/calico"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// upstreamCalico prepares --cni calico before anything is built or
// created: the pin must be complete, the images' registry must answer,
// and the pinned manifest is downloaded (or found in the cache), verified
// by its sha256, and its IPv4 pool checked against the config's
// podSubnet. Other CNIs get "".
func upstreamCalico(ctx context.Context, s Settings, sha256, podSubnet string, out io.Writer) (string, error) {
	if s.CNI != calico.Name {
		return "", nil
	}
	pin, err := calico.Release.WithSHA256(sha256)
	if err != nil {
		return "", err
	}
	return prepareCalico(ctx, pin, podSubnet, cache.Dir(), http.DefaultClient, calico.HTTPFetcher(http.DefaultClient), out)
}

// checkCalicoDaemon: upstream Calico's nodes pull docker.io/calico/*, so
// --cni calico needs a Docker daemon with a route out; svclab's own
// dockerd (its namespace has no link out of the machine) cannot give it.
func checkCalicoDaemon(cniName string, d *dockerhost.Daemon) error {
	if cniName != calico.Name || !d.Managed {
		return nil
	}
	return fmt.Errorf("--cni calico: the nodes pull upstream Calico's images from %s, but they would run in svclab's own dockerd, whose namespace has no link out of the machine; run a Docker of your own (DOCKER_HOST, or the default socket) with a route to the registry, or use --cni calico-proxyarp (svclab's offline calico-compatible CNI)", calico.Release.Registry)
}

// prepareCalico is upstreamCalico with its pin, cache root, probe client
// and fetcher given.
func prepareCalico(ctx context.Context, pin calico.Pin, podSubnet, cacheRoot string, probe *http.Client, fetch calico.Fetcher, out io.Writer) (string, error) {
	if err := pin.Validate(); err != nil {
		return "", err
	}
	if err := calico.Probe(ctx, probe, calico.ProbeURL(pin.Registry)); err != nil {
		return "", err
	}
	m, err := calico.Manifest(ctx, pin, cacheRoot, fetch)
	if err != nil {
		return "", err
	}
	pool, err := calico.PoolCIDR(m)
	if err != nil {
		return "", err
	}
	if err := calico.CheckPodSubnet(podSubnet, DefaultPodSubnet, pool); err != nil {
		return "", err
	}
	fmt.Fprintf(out, "calico %s: manifest verified (sha256 %s), registry %s reachable\n", pin.Version, pin.SHA256[:12], pin.Registry)
	return m, nil
}
