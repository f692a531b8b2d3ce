package cli

import (
	"slices"
	"testing"
	"time"

	"github.com/svclab/svclab/labs/agents/clusterdns"
	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/proxy"
)

// Every command line another svclab process is started with is one this
// CLI accepts: the subcommand exists, its flags parse to the same values,
// and its positional arguments are valid.
func TestSelfExecCommandLinesParse(t *testing.T) {
	for _, c := range []selfexec.Command{
		&selfexec.Proxy{Options: proxy.Options{LabDir: "/run/svclab/labs/l", NodeName: "node1", IPTablesBackend: "nft"}},
		&selfexec.Proxy{Options: proxy.Options{NodeName: "$(NODE_NAME)"}},
		&selfexec.Proxy{Cleanup: true},
		&selfexec.Netexec{Options: netexec.Options{PodName: "web-0", NodeName: "node2", Ports: []int{8080, 9090}}},
		&selfexec.Netexec{Options: netexec.Options{PodName: "web-0", Ports: []int{8080}, UDPPorts: []int{netexec.NoUDPPort}}},
		&selfexec.Traffic{Raw: true, Options: traffic.Options{Target: "10.96.0.10:80", Protocol: traffic.ProtocolUDP, SourcePort: 12345, Connections: 3}},
		&selfexec.Traffic{Raw: true, Options: traffic.Options{Target: "10.96.0.10:80", Connections: 3000,
			Parallelism: 8, Timeout: 10 * time.Second, Deadline: 10 * time.Minute, Path: "/clientip", Expected: []string{"a", "b"}}},
		&selfexec.CNIAgent{Variant: cni.CalicoProxyARP, ClusterCIDR: "10.244.0.0/16"},
		&selfexec.LoadBalancer{Pool: "172.18.255.224-172.18.255.254"},
		&selfexec.DNS{Options: clusterdns.Options{LabDir: "/run/svclab/labs/l", Listen: ":53", Zone: "cluster.local."}},
		&selfexec.NodeAgent{},
		&selfexec.Kubelet{LabDir: "/run/svclab/labs/l", Node: "node1"},
		&selfexec.NodeConntrack{},
		&selfexec.NodeRouteSource{IP: "10.244.1.2"},
		&selfexec.NodeGet{URL: "http://127.0.0.1:10249/proxyMode"},
		&selfexec.NodeRun{Argv: []string{"iptables-save", "-t", "nat", "-c"}},
		&selfexec.Supervise{LabDir: "/run/svclab/labs/l", Namespace: "kube-system", Pod: "kube-proxy-node1", Node: "node1",
			Log: "/run/svclab/labs/l/logs/node1-kube-proxy.log", Backoff: process.Backoff{Initial: time.Second, Max: 4 * time.Second, Reset: time.Minute},
			Argv: selfexec.Argv("/usr/bin/svclab", &selfexec.Proxy{Options: proxy.Options{LabDir: "/run/svclab/labs/l", NodeName: "node1"}})},
	} {
		args := selfexec.Args(c)
		cmd, rest, err := newRoot().Find(args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if got := cmd.CommandPath(); got != "svclab "+joinWords(c.Subcommand()) {
			t.Errorf("%q runs %q", args, got)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%q: flags: %v", args, err)
			continue
		}
		if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
			t.Errorf("%q: arguments: %v", args, err)
		}
		// The flags the CLI parsed are the ones the command line set.
		for _, a := range args[len(c.Subcommand()):] {
			if len(a) > 2 && a[:2] == "--" && a != "--" {
				name := a[2:]
				if i := slices.Index([]byte(name), '='); i >= 0 {
					name = name[:i]
				}
				if f := cmd.Flags().Lookup(name); f == nil || !f.Changed {
					t.Errorf("%q: flag --%s not taken by %q", args, name, cmd.CommandPath())
				}
			}
		}
	}
}

func TestSelfExecDefaultCNIVariant(t *testing.T) {
	if selfexec.DefaultCNIVariant != cni.FlannelVXLAN {
		t.Errorf("selfexec.DefaultCNIVariant = %q, the CNI's default is %q", selfexec.DefaultCNIVariant, cni.FlannelVXLAN)
	}
}

func joinWords(w []string) string {
	out := w[0]
	for _, s := range w[1:] {
		out += " " + s
	}
	return out
}
