package proxy

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/iptables"
	"github.com/svclab/svclab/proxy/model"
)

// fakeSysctls is sysctls over a map; names it lacks do not exist, as
// /proc/sys/net/netfilter without nf_conntrack loaded.
type fakeSysctls struct {
	values  map[string]int
	writes  []string
	failSet error
}

func (f *fakeSysctls) Get(name string) (int, error) {
	v, ok := f.values[name]
	if !ok {
		return -1, errors.New("no such file or directory")
	}
	return v, nil
}

func (f *fakeSysctls) Set(name string, value int) error {
	if f.failSet != nil {
		return f.failSet
	}
	f.values[name] = value
	f.writes = append(f.writes, name)
	return nil
}

func parseConfig(t *testing.T, body string) config.Config {
	t.Helper()
	c, err := config.Parse("config.conf", []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSetUpIPTablesKernel: the sysctls upstream's iptables NewProxier
// writes and reads, and the renderer options that follow, for the default
// configuration and the ways out of localhost node ports.
func TestSetUpIPTablesKernel(t *testing.T) {
	const nodePortsJump = `-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL`
	tests := []struct {
		name          string
		body          string
		before        map[string]int
		wantLocalhost bool
		wantWrites    []string
		wantLiberal   bool
		wantLog       string
	}{
		{name: "default: localhost node ports, route_localnet set", before: map[string]int{sysctlRouteLocalnet: 0},
			wantLocalhost: true, wantWrites: []string{sysctlRouteLocalnet}, wantLog: routeLocalnetMessage},
		{name: "already set: not written again", before: map[string]int{sysctlRouteLocalnet: 1},
			wantLocalhost: true, wantLog: routeLocalnetMessage},
		{name: "localhostNodePorts false", body: "iptables: {localhostNodePorts: false}\n", before: map[string]int{sysctlRouteLocalnet: 0}},
		{name: "nodePortAddresses without loopback", body: "nodePortAddresses: [192.168.0.0/16]\n", before: map[string]int{sysctlRouteLocalnet: 0}},
		{name: "be_liberal set: no INVALID drop", before: map[string]int{sysctlRouteLocalnet: 1, sysctlNFConntrackTCPBeLiberal: 1},
			wantLocalhost: true, wantLiberal: true, wantLog: "nf_conntrack_tcp_be_liberal set"},
		{name: "be_liberal 0", before: map[string]int{sysctlRouteLocalnet: 1, sysctlNFConntrackTCPBeLiberal: 0}, wantLocalhost: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := &fakeSysctls{values: tt.before}
			var logBuf bytes.Buffer
			opts, err := setUpIPTablesKernel(parseConfig(t, tt.body), "", sys, slog.New(slog.NewTextHandler(&logBuf, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if opts.LocalhostNodePorts != tt.wantLocalhost || opts.ConntrackTCPBeLiberal != tt.wantLiberal {
				t.Errorf("options %+v, want LocalhostNodePorts %v ConntrackTCPBeLiberal %v", opts, tt.wantLocalhost, tt.wantLiberal)
			}
			if opts.ClusterCIDR != "10.244.0.0/16" || opts.MasqueradeBit != 14 {
				t.Errorf("options %+v lost the cluster CIDR or masquerade bit", opts)
			}
			if strings.Join(sys.writes, ",") != strings.Join(tt.wantWrites, ",") {
				t.Errorf("sysctl writes %v, want %v", sys.writes, tt.wantWrites)
			}
			if tt.wantLocalhost && sys.values[sysctlRouteLocalnet] != 1 {
				t.Errorf("route_localnet = %d with localhost node ports", sys.values[sysctlRouteLocalnet])
			}
			if tt.wantLog != "" && !strings.Contains(logBuf.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, logBuf.String())
			}
			if !tt.wantLocalhost && strings.Contains(logBuf.String(), "route_localnet") {
				t.Errorf("log mentions route_localnet without localhost node ports:\n%s", logBuf.String())
			}
			// What the renderer makes of it: upstream's KUBE-FIREWALL rule
			// and an unrestricted KUBE-NODEPORTS jump, or neither.
			r, err := iptables.NewRenderer(opts)
			if err != nil {
				t.Fatal(err)
			}
			payload := string(r.Render(model.Build(nil, nil, "node1")).Payload())
			firewall := strings.Contains(payload, `-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8`)
			unrestricted := strings.Contains(payload, nodePortsJump+" -j KUBE-NODEPORTS\n")
			restricted := strings.Contains(payload, nodePortsJump+" ! -d 127.0.0.0/8 -j KUBE-NODEPORTS\n")
			if firewall != tt.wantLocalhost || unrestricted != tt.wantLocalhost || restricted == tt.wantLocalhost {
				t.Errorf("KUBE-FIREWALL rule %v, unrestricted jump %v, '! -d 127.0.0.0/8' jump %v; want localhost node ports %v:\n%s",
					firewall, unrestricted, restricted, tt.wantLocalhost, payload)
			}
		})
	}
}

// TestSetUpIPTablesKernelFailure: a route_localnet that cannot be written
// stops the proxy with upstream's message.
func TestSetUpIPTablesKernelFailure(t *testing.T) {
	sys := &fakeSysctls{values: map[string]int{sysctlRouteLocalnet: 0}, failSet: errors.New("read-only file system")}
	_, err := setUpIPTablesKernel(parseConfig(t, ""), "", sys, slog.New(slog.DiscardHandler))
	want := "can't set sysctl net/ipv4/conf/all/route_localnet to 1: read-only file system"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
