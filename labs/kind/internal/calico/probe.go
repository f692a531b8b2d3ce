package calico

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// ProbeTimeout bounds the registry probe.
const ProbeTimeout = 5 * time.Second

// ProbeURL is the registry API's base, which answers 200 or 401 (auth
// needed) to anyone who reaches it.
func ProbeURL(registry string) string { return "https://" + registry + "/v2/" }

// Probe checks that the registry answers: GET url within ProbeTimeout;
// 200 or 401 is reachable, anything else (no answer, another status) is
// one error saying --cni calico needs a registry.
func Probe(ctx context.Context, client *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return unreachable(url, err.Error())
	}
	resp, err := client.Do(req)
	if err != nil {
		return unreachable(url, err.Error())
	}
	resp.Body.Close()
	if !reachableStatus(resp.StatusCode) {
		return unreachable(url, resp.Status)
	}
	return nil
}

func reachableStatus(code int) bool {
	return code == http.StatusOK || code == http.StatusUnauthorized
}

func unreachable(url, why string) error {
	return fmt.Errorf("--cni calico needs a container registry for upstream Calico's images, and %s does not answer (%s); use --cni calico-proxyarp (svclab's offline calico-compatible CNI)", url, why)
}
