package traffic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/netns/network"
)

// clientEnv is how TestIntegrationCountsIPv6Backends asks this test binary,
// run again inside the test's namespace, to be the traffic client: the
// Options as JSON. A socket belongs to the namespace of the thread that
// opens it, and Run dials from many goroutines, so the client is a process
// of its own in the namespace, as a lab runs `svclab traffic` in a host.
const clientEnv = "SVCLAB_TRAFFIC_TEST_CLIENT"

// TestMain is the test binary, or the traffic client when clientEnv is set:
// then it runs the Options it holds and prints the Result as JSON.
func TestMain(m *testing.M) {
	if opts := os.Getenv(clientEnv); opts != "" {
		os.Exit(runClient(opts))
	}
	os.Exit(m.Run())
}

func runClient(optsJSON string) int {
	var o Options
	if err := json.Unmarshal([]byte(optsJSON), &o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 2
	}
	return 0
}

// TestIntegrationCountsIPv6Backends runs three netexec servers on ULA
// addresses of a fresh namespace (bound to all addresses, as a pod's), and
// the traffic client in that namespace counting each over IPv6, from a
// source address of its own, and ::1 too.
func TestIntegrationCountsIPv6Backends(t *testing.T) {
	roottest.Require(t, "creates a network namespace with IPv6 addresses in it")
	ns := roottest.Netns(t, "svclab-traffic6-test")
	addrs := []string{"fd00:10:244:1::11", "fd00:10:244:1::12", "fd00:10:244:1::13", "fd00:10:244:1::99"}
	for _, a := range addrs {
		roottest.AddLocalAddrs(t, ns, "lo", a+"/128")
	}
	backends := map[string]string{}
	for i, pod := range []string{"web-1", "web-2", "web-3"} {
		backends[pod] = startNetexecIn(t, ns, pod, addrs[i])
	}
	backends["web-lo"] = startNetexecIn(t, ns, "web-lo", "::1")
	for pod, target := range backends {
		res := runClientIn(t, ns, Options{Target: target, Connections: 20, Parallelism: 4, SourceIP: addrs[3]})
		if res.Succeeded != 20 || res.Backends[pod] != 20 || len(res.Backends) != 1 {
			t.Errorf("%s: succeeded %d backends %v failures %v, want 20 connections all to %s", target, res.Succeeded, res.Backends, res.Failures, pod)
		}
		for _, c := range res.Connections {
			if !strings.HasPrefix(c.LocalAddress, "["+addrs[3]+"]:") {
				t.Errorf("%s: connection %d from %q, want [%s]:PORT", target, c.Index, c.LocalAddress, addrs[3])
			}
		}
	}
}

// startNetexecIn starts a netexec server in namespace ns on a port of ip
// and returns [ip]:port.
func startNetexecIn(t *testing.T, ns, pod, ip string) string {
	t.Helper()
	var s *netexec.Server
	err := network.Do(ns, func() error {
		var err error
		s, err = netexec.Listen(netexec.Options{PodName: pod, Ports: []int{0}, BindAddress: ip, PodIPs: []string{ip}, Logger: slog.New(slog.DiscardHandler)})
		return err
	})
	if err != nil {
		t.Fatalf("netexec %s in %s: %v", pod, ns, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	port := s.Addrs()[0].(*net.TCPAddr).Port
	return net.JoinHostPort(ip, fmt.Sprint(port))
}

// runClientIn runs this test binary as the traffic client inside ns.
func runClientIn(t *testing.T, ns string, o Options) *Result {
	t.Helper()
	opts, _ := json.Marshal(o)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", ns, exe)
	cmd.Env = append(os.Environ(), clientEnv+"="+string(opts))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("traffic client in %s: %v: %s", ns, err, stderr.String())
	}
	var res Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("traffic client in %s: %v: %s", ns, err, stdout.String())
	}
	return &res
}
