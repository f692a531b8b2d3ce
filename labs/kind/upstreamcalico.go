package kind

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/svclab/svclab/labs/kind/cache"
	"github.com/svclab/svclab/labs/kind/calico"
)

// upstreamCalico prepares --cni calico before anything is built or
// created: the pin must be complete, the images' registry must answer,
// and the pinned manifest is downloaded (or found in the cache), verified
// by its sha256, and its IPv4 pool checked against the config's
// podSubnet. Other CNIs get "".
func upstreamCalico(ctx context.Context, s Settings, podSubnet string, out io.Writer) (string, error) {
	if s.CNI != calico.Name {
		return "", nil
	}
	return prepareCalico(ctx, calico.Release, podSubnet, cache.Dir(), http.DefaultClient, calico.HTTPFetcher(http.DefaultClient), out)
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
