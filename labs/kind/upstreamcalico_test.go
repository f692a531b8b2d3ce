package kind

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/kind/internal/calico"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// calicoManifest stands for upstream's calico.yaml: its pool commented
// out, as upstream ships it.
const calicoManifest = `kind: DaemonSet
metadata: {name: calico-node, namespace: kube-system}
spec:
  template:
    spec:
      containers:
        - name: calico-node
          env:
            # - name: CALICO_IPV4POOL_CIDR
            #   value: "192.168.0.0/16"
`

// prepareCalico with a registry that answers and a fetcher that serves the
// manifest: the pin is checked, the manifest verified and cached, and the
// kind config's podSubnet checked against calico-node's pool.
func TestPrepareCalico(t *testing.T) {
	registry := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized) // docker.io's answer to an anonymous /v2/
	}))
	defer registry.Close()
	sum := sha256.Sum256([]byte(calicoManifest))
	pin := calico.Pin{Version: "v9.9.9", URL: "https://example.invalid/calico.yaml", Registry: strings.TrimPrefix(registry.URL, "https://")}
	pin, err := pin.WithSHA256(hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	downloads := 0
	fetch := func(ctx context.Context, url string) (io.ReadCloser, error) {
		downloads++
		return io.NopCloser(strings.NewReader(calicoManifest)), nil
	}
	cache := t.TempDir()
	var out bytes.Buffer
	m, err := prepareCalico(context.Background(), pin, "192.168.0.0/16", cache, registry.Client(), fetch, &out)
	if err != nil || m != calicoManifest {
		t.Fatalf("prepareCalico: %v (manifest %d bytes)", err, len(m))
	}
	if !strings.Contains(out.String(), "manifest verified") {
		t.Errorf("no verification line: %q", out.String())
	}
	// The second time the cache serves it.
	if _, err := prepareCalico(context.Background(), pin, "192.168.0.0/16", cache, registry.Client(), fetch, io.Discard); err != nil || downloads != 1 {
		t.Errorf("second prepare: %v, %d downloads, want 1", err, downloads)
	}
	// svclab's default podSubnet is not calico's pool: refused, naming it.
	if _, err := prepareCalico(context.Background(), pin, "", cache, registry.Client(), fetch, io.Discard); err == nil || !strings.Contains(err.Error(), "podSubnet: 192.168.0.0/16") {
		t.Errorf("the default podSubnet: %v", err)
	}
	// A pin without a sha256 stops before the registry or the download.
	unpinned := pin
	unpinned.SHA256 = ""
	if _, err := prepareCalico(context.Background(), unpinned, "192.168.0.0/16", t.TempDir(), registry.Client(), fetch, io.Discard); err == nil || !strings.Contains(err.Error(), "--calico-manifest-sha256") || downloads != 1 {
		t.Errorf("unpinned: %v, %d downloads", err, downloads)
	}
}

// svclab's own dockerd has no link out, so upstream Calico's images could
// not be pulled: refused; a user's Docker is fine; other CNIs never ask.
func TestCheckCalicoDaemon(t *testing.T) {
	if err := checkCalicoDaemon(calico.Name, &dockerhost.Daemon{Managed: true}); err == nil || !strings.Contains(err.Error(), "calico-proxyarp") {
		t.Errorf("svclab's dockerd: %v", err)
	}
	if err := checkCalicoDaemon(calico.Name, &dockerhost.Daemon{Host: "unix:///run/docker.sock"}); err != nil {
		t.Errorf("the user's Docker: %v", err)
	}
	if err := checkCalicoDaemon("flannel", &dockerhost.Daemon{Managed: true}); err != nil {
		t.Errorf("--cni flannel: %v", err)
	}
}
