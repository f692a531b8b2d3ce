package selfexec

import (
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/svclab/svclab/labs/agents/clusterdns"
	"github.com/svclab/svclab/labs/agents/netexec"
	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/proxy"
)

// parse reads args (after the subcommand) back into a fresh command of c's type.
func parse(t *testing.T, c Command, args []string) Command {
	t.Helper()
	n := len(c.Subcommand())
	if !slices.Equal(args[:n], c.Subcommand()) {
		t.Fatalf("argv %q does not start with the subcommand %q", args, c.Subcommand())
	}
	out := reflect.New(reflect.TypeOf(c).Elem()).Interface().(Command)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	out.AddFlags(fs)
	if err := fs.Parse(args[n:]); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return out
}

func TestArgvRoundTrips(t *testing.T) {
	for _, c := range []Command{
		&Proxy{Options: proxy.Options{LabDir: "/run/svclab/labs/l", NodeName: "node1", IPTablesBackend: "nft"}},
		&Proxy{Options: proxy.Options{NodeName: "$(NODE_NAME)"}},
		&Proxy{Options: proxy.Options{LabDir: "/d", NodeName: "n1", NodeIPs: []netip.Addr{netip.MustParseAddr("fc00:f853:ccd:e793::2"), netip.MustParseAddr("172.18.0.2")}}},
		&Proxy{Cleanup: true, Options: proxy.Options{IPTablesBackend: "legacy"}},
		&Netexec{Options: netexec.Options{PodName: "web-0", NodeName: "node2", Ports: []int{8080, 9090}}},
		&Netexec{Options: netexec.Options{PodName: "web-0", Ports: []int{8080}, UDPPorts: []int{8080, 9090}}},
		&Netexec{Options: netexec.Options{PodName: "web-0", Ports: []int{8080}, UDPPorts: []int{netexec.NoUDPPort}}},
		&Traffic{Raw: true, Options: traffic.Options{Target: "10.96.0.10:80", Protocol: traffic.ProtocolUDP, SourcePort: 12345, Connections: 3}},
		&Traffic{Raw: true, Options: traffic.Options{Target: "10.96.0.10:80", Connections: 3000, Parallelism: 8,
			Timeout: 3 * time.Second, Deadline: time.Minute, Path: "/clientip", Expected: []string{"a", "b"}}},
		&Traffic{Options: traffic.Options{Target: "10.96.0.10:80", Connections: 100}},
		&CNIAgent{Variant: "calico-proxyarp", ClusterCIDR: "10.244.0.0/16"},
		&DNS{Options: clusterdns.Options{LabDir: "/run/svclab/labs/l", Listen: ":53", MetricsListen: "-", Zone: "lab.local."}},
		&DNS{},
	} {
		args := Args(c)
		got := parse(t, c, args)
		// Zero fields mean "the default": compare after giving c its defaults.
		want := reflect.New(reflect.TypeOf(c).Elem()).Interface().(Command)
		want.AddFlags(pflag.NewFlagSet("defaults", pflag.ContinueOnError))
		mergeNonZero(reflect.ValueOf(want).Elem(), reflect.ValueOf(c).Elem())
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q parses to %+v, want %+v", args, got, want)
		}
	}
}

// mergeNonZero copies every non-zero field of src into dst (recursing into
// embedded structs).
func mergeNonZero(dst, src reflect.Value) {
	for i := range src.NumField() {
		f := src.Field(i)
		if f.Kind() == reflect.Struct {
			mergeNonZero(dst.Field(i), f)
			continue
		}
		if !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
}

func TestArgv(t *testing.T) {
	for _, tc := range []struct {
		cmd  Command
		want []string
	}{
		{&Proxy{Options: proxy.Options{LabDir: "/d", NodeName: "n1"}}, []string{"svclab", "proxy", "--lab-dir=/d", "--node=n1"}},
		{&Proxy{Options: proxy.Options{LabDir: "/d", NodeName: "n1", NodeIPs: []netip.Addr{netip.MustParseAddr("192.168.16.2"), netip.MustParseAddr("fd00:10::2")}}},
			[]string{"svclab", "proxy", "--lab-dir=/d", "--node=n1", "--node-ip=192.168.16.2", "--node-ip=fd00:10::2"}},
		{&Netexec{Options: netexec.Options{PodName: "p", Ports: []int{80, 81}}}, []string{"svclab", "netexec", "--pod-name=p", "--http-port=80", "--http-port=81"}},
		{&Netexec{Options: netexec.Options{PodName: "p", Ports: []int{80}, UDPPorts: []int{80}}}, []string{"svclab", "netexec", "--pod-name=p", "--http-port=80", "--udp-port=80"}},
		{&Traffic{Raw: true, Options: traffic.Options{Target: "1.2.3.4:80", Protocol: "udp", SourcePort: 5000, Connections: 7}},
			[]string{"svclab", "traffic", "--to=1.2.3.4:80", "--protocol=udp", "--source-port=5000", "--count=7", "--raw"}},
		{&Traffic{Raw: true, Options: traffic.Options{Target: "1.2.3.4:80", Connections: 7}},
			[]string{"svclab", "traffic", "--to=1.2.3.4:80", "--count=7", "--raw"}},
		{&NodeGet{URL: "http://127.0.0.1:10249/proxyMode"}, []string{"svclab", "node", "get", "http://127.0.0.1:10249/proxyMode"}},
		{&NodeRun{Argv: []string{"nft", "-j", "list", "ruleset"}}, []string{"svclab", "node", "run", "--", "nft", "-j", "list", "ruleset"}},
		{&NodeConntrack{}, []string{"svclab", "node", "conntrack"}},
		{&Supervise{LabDir: "/d", Pod: "web-0", Node: "n1", Argv: []string{"svclab", "netexec", "--pod-name=web-0"}},
			[]string{"svclab", "supervise", "--lab-dir=/d", "--pod=web-0", "--node=n1", "--", "svclab", "netexec", "--pod-name=web-0"}},
		{&Supervise{LabDir: "/d", Namespace: "kube-system", Pod: "p", Backoff: process.Backoff{Initial: time.Second}, Argv: []string{"x"}},
			[]string{"svclab", "supervise", "--lab-dir=/d", "--namespace=kube-system", "--pod=p", "--backoff-initial=1s", "--", "x"}},
	} {
		if got := Argv("svclab", tc.cmd); !slices.Equal(got, tc.want) {
			t.Errorf("Argv = %q, want %q", got, tc.want)
		}
	}
}

func TestNodeIPFlagRefusesWhatIsNotAnAddress(t *testing.T) {
	for _, bad := range []string{"10.0.0", "fd00::1/64", "fe80::1%eth0", "node1"} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		(&Proxy{}).AddFlags(fs)
		if err := fs.Parse([]string{"--node-ip=" + bad}); err == nil {
			t.Errorf("--node-ip=%s was accepted", bad)
		}
	}
}
