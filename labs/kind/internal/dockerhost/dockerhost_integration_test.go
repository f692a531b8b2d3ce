package dockerhost

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationDaemonInItsNamespace starts svclab's dockerd (unless a
// Docker already runs), checks that its bridge lives in svclab-docker and
// not in the host's namespace, stops it and checks the host is as before.
func TestIntegrationDaemonInItsNamespace(t *testing.T) {
	if os.Getenv("SVCLAB_E2E_KIND") != "1" {
		t.Skip("set SVCLAB_E2E_KIND=1 to run the kind backend's integration tests (they install and start Docker)")
	}
	roottest.Require(t, "starts dockerd in a network namespace")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, ok := Running(ctx); ok && !running() {
		t.Skip("a Docker of the user's runs; svclab leaves it alone")
	}
	linksBefore := hostLinks(t)
	d, err := Ensure(ctx, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Managed {
		t.Fatalf("Ensure returned the user's daemon, want svclab's")
	}
	if _, err := os.Stat("/run/netns/" + Namespace); err != nil {
		t.Fatalf("namespace %s: %v", Namespace, err)
	}
	out, err := d.NetnsCommand("ip", "-o", "link", "show", "docker0").Text(ctx)
	if err != nil {
		t.Fatalf("docker0 is not in %s: %v", Namespace, err)
	}
	t.Logf("in %s: %s", Namespace, out)
	if _, err := net.InterfaceByName("docker0"); err == nil {
		t.Fatalf("docker0 appeared in the host's namespace")
	}
	if clusters, _ := KindClusters(ctx, d); len(clusters) > 0 {
		t.Skipf("kind clusters run on svclab's dockerd (%v); not stopping it", clusters)
	}
	d.Done()
	if othersUse() {
		t.Skip("another svclab process uses svclab's dockerd (a build, a create); not stopping it")
	}
	if err := Release(ctx, d, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/run/netns/" + Namespace); err == nil {
		t.Fatalf("namespace %s still exists after Release", Namespace)
	}
	if Leftovers() {
		t.Fatalf("Leftovers() after Release")
	}
	if after := hostLinks(t); len(after) != len(linksBefore) {
		t.Fatalf("host links before %v, after %v", linksBefore, after)
	}
}

func hostLinks(t *testing.T) []string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	return names
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
