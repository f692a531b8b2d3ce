package bench

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/labs/netns/workload"
)

func TestParseParallelism(t *testing.T) {
	got, err := ParseParallelism("8, 1,2,8")
	if err != nil || !slices.Equal(got, []int{1, 2, 8}) {
		t.Errorf("got %v, %v; want [1 2 8]", got, err)
	}
	for _, bad := range []string{"", "0", "-1", "x", "65", "1,,2"} {
		if _, err := ParseParallelism(bad); err == nil || !strings.HasPrefix(err.Error(), "--parallelism: ") {
			t.Errorf("%q: error %v, want one naming --parallelism", bad, err)
		}
	}
}

// TestTrafficOptionsDefaultsAndBounds checks the defaults a zero value
// gets and that every bound is refused with the flag's name.
func TestTrafficOptionsDefaultsAndBounds(t *testing.T) {
	o, err := TrafficOptions{Modes: Modes[:1]}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Services != 1 || o.Connections != DefaultTrafficConnections || !slices.Equal(o.Parallelism, DefaultParallelism) || o.Repetitions != DefaultRepetitions ||
		o.RunDeadline != time.Minute || o.Timeout != 15*time.Minute || o.Lab.Out == nil {
		t.Errorf("defaults: %+v", o)
	}
	for _, tc := range []struct {
		o    TrafficOptions
		want string
	}{
		{TrafficOptions{}, "no modes"},
		{TrafficOptions{Modes: Modes[:1], Services: MaxServices + 1}, "--services 50001: want 1 to 50000"},
		{TrafficOptions{Modes: Modes[:1], Connections: MaxTrafficConnections + 1}, "--connections 100001: want 1 to 100000"},
		{TrafficOptions{Modes: Modes[:1], Connections: -1}, "--connections -1"},
		{TrafficOptions{Modes: Modes[:1], Repetitions: MaxRepetitions + 1}, "--repetitions 21: want 1 to 20"},
		{TrafficOptions{Modes: Modes[:1], RunDeadline: -time.Second}, "must not be negative"},
	} {
		if _, err := tc.o.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestTrafficObjectsApply applies the benchmark's pods and three
// generated Services on the lab's in-memory state: the last Service (the
// target) has the last generated cluster IP and exactly one endpoint, the
// server pod's IP on the server port, so the cluster IP and the pod IP
// lead to the same process.
func TestTrafficObjectsApply(t *testing.T) {
	const n = 3
	pods, err := workload.Decode([]byte(trafficPodsYAML()), "pods")
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := decodeServices(n)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := topology.Parse([]byte(topologyYAML("trbench-test", Modes[0])), "lab")
	if err != nil {
		t.Fatal(err)
	}
	c := workload.Cluster{ServiceSubnet: lab.Spec.ServiceSubnet}
	for _, node := range lab.Spec.Nodes {
		c.Nodes = append(c.Nodes, workload.Node{Name: node.Name, PodCIDR: node.PodCIDR})
	}
	st, err := c.Apply(&labstore.State{}, pods, "pods")
	if err != nil {
		t.Fatal(err)
	}
	if st, err = c.Apply(st, svcs, "services"); err != nil {
		t.Fatal(err)
	}
	target := st.Service(namespace, serviceName(n-1))
	if target == nil || target.Spec.ClusterIP != addrPort(n-1).Addr().String() {
		t.Fatalf("Service %v, want cluster IP %s", target, addrPort(n-1).Addr())
	}
	var server string
	for _, p := range st.Pods {
		if p.Labels["app"] == trafficServerApp {
			server = p.Status.PodIP
		}
	}
	var endpoints []string
	for _, s := range st.EndpointSlices {
		if s.Labels["kubernetes.io/service-name"] != serviceName(n-1) {
			continue
		}
		for _, e := range s.Endpoints {
			endpoints = append(endpoints, e.Addresses...)
		}
		if len(s.Ports) != 1 || s.Ports[0].Port == nil || *s.Ports[0].Port != serverPort {
			t.Errorf("EndpointSlice ports %v, want %d", s.Ports, serverPort)
		}
	}
	if server == "" || !slices.Equal(endpoints, []string{server}) {
		t.Errorf("endpoints %v, want only the server pod's IP %q", endpoints, server)
	}
}
