package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/traffic"
	"github.com/svclab/svclab/labs/agents/traffic/bars"
	"github.com/svclab/svclab/labs/netns"
	"github.com/svclab/svclab/labs/netns/graph"
	"github.com/svclab/svclab/labs/netns/topology"
)

// Source is what the page shows and does; LabSource is the real one.
type Source interface {
	// Store reads what the lab's store holds now: its objects, topology,
	// the proxies' statuses (the nodes, without their kernels) and the last
	// trace. It reads a few files; the server calls it on every request.
	// version changes with every change the store records that the
	// kernels follow (an apply, a proxy's sync or restart).
	Store() (st *State, version string, err error)
	// Kernels reads each node's Service rules and counters (nodes as Store
	// returned them: a node's proxy mode says which tool) by a command in
	// every node: the server caches it and runs one at a time.
	Kernels(ctx context.Context, nodes []NodeView) map[string]Kernel
	// TraceSVG returns the last trace's picture, if there is one.
	TraceSVG() ([]byte, bool, error)
	// Traffic sends count connections to the Service port key names
	// (ServiceRef.Key) from the lab's client.
	Traffic(ctx context.Context, key string, count int) (*TrafficView, error)
}

// Files of the lab's store the trace command writes.
const (
	TraceSVGFile  = labstore.LastTraceSVG
	TraceJSONFile = labstore.LastTraceJSON
)

// Bounds of what the source reads and runs.
const (
	kernelReadTimeout = 5 * time.Second
	maxKernelOutput   = 8 << 20
	maxTraceSVG       = 4 << 20
	// TrafficDeadline bounds a traffic run from the page.
	TrafficDeadline = 30 * time.Second
)

// LabSource reads a running lab.
type LabSource struct {
	Lab *netns.Lab
	// Binary is the svclab binary traffic runs in the client's namespace
	// (netns.Options.Binary; default: this one).
	Binary string
}

// Store implements Source.
func (s *LabSource) Store() (*State, string, error) {
	objs, gen, err := s.Lab.Store.ReadObjects()
	if err != nil {
		return nil, "", fmt.Errorf("lab %s: %w", s.Lab.Name(), err)
	}
	g, err := graph.FromStore(s.Lab.Topology, objs)
	if err != nil {
		return nil, "", fmt.Errorf("lab %s: %w", s.Lab.Name(), err)
	}
	var svg strings.Builder
	if err := graph.WriteSVG(&svg, g); err != nil {
		return nil, "", err
	}
	statuses, err := s.Lab.Store.ProxyStatuses()
	if err != nil {
		return nil, "", fmt.Errorf("lab %s: %w", s.Lab.Name(), err)
	}
	st := &State{
		Lab: s.Lab.Name(), Generation: gen, Client: s.client(), Topology: svg.String(),
		Nodes: []NodeView{}, Services: ServiceRefs(objs), Trace: s.trace(),
	}
	for _, n := range s.Lab.Topology.Spec.Nodes {
		ps, ok := statuses[n.Name]
		nv := NodeView{Name: n.Name, Mode: ps.Mode, Backend: ps.Backend, Healthy: ps.Healthy, Error: ps.Error}
		if !ok {
			nv.Error = "its proxy has not reported yet"
		}
		st.Nodes = append(st.Nodes, nv)
	}
	return st, storeVersion(gen, statuses), nil
}

// storeVersion names what the store recorded that the kernels follow: the
// objects' generation and every proxy's last report (a sync, a restart in
// another mode).
func storeVersion(gen int64, statuses map[string]labstore.ProxyStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "generation %d", gen)
	for _, node := range slices.Sorted(maps.Keys(statuses)) {
		ps := statuses[node]
		fmt.Fprintf(&b, "; %q pid %d %s %s generation %d synced %s healthy %t failures %d %q", node, ps.PID, ps.Mode,
			ps.Backend, ps.Generation, ps.LastSync.Format(time.RFC3339Nano), ps.Healthy, ps.Failures, ps.Error)
	}
	return b.String()
}

// Kernels implements Source: the nodes one after the other, each bounded
// by kernelReadTimeout and maxKernelOutput.
func (s *LabSource) Kernels(ctx context.Context, nodes []NodeView) map[string]Kernel {
	out := make(map[string]Kernel, len(nodes))
	for _, n := range nodes {
		out[n.Name] = s.kernel(ctx, n.Name, n.Mode)
	}
	return out
}

// kernel reads one node's kernel: ipvsadm in IPVS mode (both families in
// one listing), else the nat table of each of the lab's IP families
// (iptables-save, ip6tables-save).
func (s *LabSource) kernel(ctx context.Context, node, mode string) Kernel {
	var k Kernel
	var err error
	if mode == string(topology.ProxyModeIPVS) {
		cmd, cerr := s.Lab.Command(node, hostprog.IPVSAdm, "-Ln", "--stats", "--exact")
		var out []byte
		if out, err = runBounded(ctx, cmd, cerr); err == nil {
			k.VirtualServers, err = ParseIPVSStats(string(out))
		}
	} else {
		k.Chains, err = s.natChains(ctx, node)
	}
	if err != nil {
		k.Error = err.Error()
	}
	return k
}

// natChains are the KUBE chains of the nat table of every IP family of the
// lab, the primary family's first; an IPv6 chain says so in its Family.
func (s *LabSource) natChains(ctx context.Context, node string) ([]Chain, error) {
	var chains []Chain
	for _, fam := range s.Lab.Topology.Spec.Families() {
		cmd, cerr := s.saveCommand(node, fam)
		out, err := runBounded(ctx, cmd, cerr)
		if err != nil {
			return nil, err
		}
		got, err := ParseNATCounters(string(out))
		if err != nil {
			return nil, err
		}
		chains = append(chains, inFamily(got, fam)...)
	}
	return chains, nil
}

// inFamily marks the chains read from fam's table: IPv6 ones get Family
// "IPv6"; IPv4 ones stay unmarked, as an IPv4 lab's page has them.
func inFamily(chains []Chain, fam topology.IPFamily) []Chain {
	if fam != topology.IPFamilyIPv6 {
		return chains
	}
	for i := range chains {
		chains[i].Family = FamilyIPv6
	}
	return chains
}

// saveCommand is `iptables-save -c -t nat` (ip6tables-save for IPv6) of
// the lab's iptables backend in the node's namespace. Each program is
// named where it runs (internal/hostprog's scan reads the calls).
func (s *LabSource) saveCommand(node string, fam topology.IPFamily) (*exec.Cmd, error) {
	v6 := fam == topology.IPFamilyIPv6
	switch s.Lab.Topology.Spec.Proxy.IPTablesBackend {
	case topology.BackendLegacy:
		if v6 {
			return s.Lab.Command(node, hostprog.IP6TablesLegacySave, "-c", "-t", "nat")
		}
		return s.Lab.Command(node, hostprog.IPTablesLegacySave, "-c", "-t", "nat")
	case topology.BackendNFT:
		if v6 {
			return s.Lab.Command(node, hostprog.IP6TablesNFTSave, "-c", "-t", "nat")
		}
		return s.Lab.Command(node, hostprog.IPTablesNFTSave, "-c", "-t", "nat")
	}
	if v6 {
		return s.Lab.Command(node, hostprog.IP6TablesSave, "-c", "-t", "nat")
	}
	return s.Lab.Command(node, hostprog.IPTablesSave, "-c", "-t", "nat")
}

// client is the host the page's traffic comes from: the lab's first
// client, else its first node.
func (s *LabSource) client() string {
	if c := s.Lab.Topology.Spec.Clients; len(c) > 0 {
		return c[0].Name
	}
	if n := s.Lab.Topology.Spec.Nodes; len(n) > 0 {
		return n[0].Name
	}
	return ""
}

// trace says whether the store holds a trace picture, and since when.
func (s *LabSource) trace() TraceView {
	path, err := s.Lab.Store.Confine(TraceSVGFile)
	if err != nil {
		return TraceView{}
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return TraceView{}
	}
	return TraceView{Present: true, Modified: fi.ModTime().UTC().Format(time.RFC3339Nano)}
}

// TraceSVG implements Source: the store's last-trace.svg, at most maxTraceSVG bytes.
func (s *LabSource) TraceSVG() ([]byte, bool, error) {
	path, err := s.Lab.Store.Confine(TraceSVGFile)
	if err != nil {
		return nil, false, err
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxTraceSVG+1)); err != nil {
		return nil, false, err
	}
	if buf.Len() > maxTraceSVG {
		return nil, false, fmt.Errorf("%s: larger than %d bytes", TraceSVGFile, maxTraceSVG)
	}
	return buf.Bytes(), true, nil
}

// Traffic implements Source.
func (s *LabSource) Traffic(ctx context.Context, key string, count int) (*TrafficView, error) {
	objs, _, err := s.Lab.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	var ref *ServiceRef
	for _, r := range ServiceRefs(objs) {
		if r.Key == key {
			ref = &r
			break
		}
	}
	if ref == nil {
		return nil, fmt.Errorf("service %q: no such Service port in lab %s", key, s.Lab.Name())
	}
	from := s.client()
	res, err := s.Lab.Traffic(from, traffic.Options{Target: ref.Target, Connections: count, Deadline: TrafficDeadline}, netns.Options{Binary: s.Binary})
	if err != nil {
		return nil, err
	}
	return trafficView(ref, from, res.Report())
}

// trafficView is a report as the page shows it.
func trafficView(ref *ServiceRef, from string, rep traffic.Report) (*TrafficView, error) {
	var svg strings.Builder
	if err := bars.WriteSVG(&svg, rep); err != nil {
		return nil, err
	}
	return &TrafficView{Service: ref.Key, Target: ref.Target, From: from, Count: rep.Requested,
		Verdict: rep.Verdict, Summary: rep.VerdictLine(), SVG: svg.String()}, nil
}
