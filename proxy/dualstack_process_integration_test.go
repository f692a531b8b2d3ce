package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
)

// TestIntegrationDualStackLabProxy runs `svclab proxy` as a lab runs it,
// in a node namespace with an IPv4 and an IPv6 address and told both
// (--node-ip), over a lab store holding a dual-stack Service: its first
// sync writes table ip and table ip6 kube-proxy, each with its family's
// ClusterIP and endpoint, and /healthz and /metrics carry both families.
func TestIntegrationDualStackLabProxy(t *testing.T) {
	roottest.Require(t, "runs svclab proxy in a network namespace")
	bin := roottest.SharedBinary(t)
	ns := dualStackNetns(t)
	run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	dir := t.TempDir()
	st := labstore.OpenDir(dir)
	objs := dualStackObjects()
	if _, err := st.WriteObjects(&labstore.State{Services: objs.Services, EndpointSlices: objs.EndpointSlices}); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "kube-proxy.conf")
	body := "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nclusterCIDR: 10.244.0.0/16,fd00:10:244::/56\nmetricsBindAddress: 127.0.0.1:10249\nhealthzBindAddress: 127.0.0.1:10256\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, bin, "proxy", "--lab-dir="+dir, "--node=n1", "--config="+conf,
		"--node-ip=192.168.0.10", "--node-ip=fd00:192::10")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	logged := waitForLogLine(t, stderr, "msg=synced")
	if !strings.Contains(logged, "dual-stack mode") {
		t.Errorf("the proxy did not say it runs dual-stack:\n%s", logged)
	}

	ruleset := nft(t, ns)
	for _, want := range []string{"table ip kube-proxy", "table ip6 kube-proxy", "10.96.0.11", "fd00:10:96::b", "fd00:10:244:1::5 . 8080", "ip6 saddr != fd00:10:244::/56"} {
		if !strings.Contains(ruleset, want) {
			t.Errorf("after the first sync the ruleset lacks %q:\n%s", want, ruleset)
		}
	}
	roottest.InNetns(t, ns, func() error {
		health := httpGet("127.0.0.1:10256", "/healthz")
		if !strings.Contains(health, `"IPv4":{`) || !strings.Contains(health, `"IPv6":{`) {
			return fmt.Errorf("/healthz lacks a family's status:\n%s", health)
		}
		metrics := httpGet("127.0.0.1:10249", "/metrics")
		for _, f := range []string{"IPv4", "IPv6"} {
			if !strings.Contains(metrics, `kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="`+f+`"}`) {
				return fmt.Errorf("/metrics lacks the %s sync duration:\n%s", f, metrics)
			}
		}
		return nil
	})
}

// waitForLogLine reads r until a line containing want and returns what
// it read; the process ending first fails the test.
func waitForLogLine(t *testing.T, r io.Reader, want string) string {
	t.Helper()
	var seen strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), want) {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return seen.String()
		}
	}
	t.Fatalf("the proxy ended before logging %q:\n%s", want, seen.String())
	return ""
}

// httpGet is a plain HTTP/1.0 GET dialled from the calling thread (so in
// its network namespace), returning the whole response.
func httpGet(addr, path string) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, addr)
	b, _ := io.ReadAll(c)
	return string(b)
}
