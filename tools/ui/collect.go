package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs"
	"github.com/svclab/svclab/labs/graph"
	"github.com/svclab/svclab/labs/topology"
	"github.com/svclab/svclab/labs/traffic"
	"github.com/svclab/svclab/labs/traffic/bars"
)

// Source is what the page shows and does; LabSource is the real one.
type Source interface {
	// State reads the lab: its store and each node's kernel.
	State(ctx context.Context) (*State, error)
	// TraceSVG returns the last trace's picture, if there is one.
	TraceSVG() ([]byte, bool, error)
	// Traffic sends count connections to the Service port key names
	// (ServiceRef.Key) from the lab's client.
	Traffic(ctx context.Context, key string, count int) (*TrafficView, error)
}

// Files of the lab's store the trace command writes.
const (
	TraceSVGFile  = "last-trace.svg"
	TraceJSONFile = "last-trace.json"
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
	Lab *labs.Lab
	// Binary is the svclab binary traffic runs in the client's namespace
	// (labs.Options.Binary; default: this one).
	Binary string
}

// State implements Source.
func (s *LabSource) State(ctx context.Context) (*State, error) {
	objs, gen, err := s.Lab.Store.ReadObjects()
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", s.Lab.Name(), err)
	}
	g, err := graph.FromStore(s.Lab.Topology, objs)
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", s.Lab.Name(), err)
	}
	var svg strings.Builder
	if err := graph.WriteSVG(&svg, g); err != nil {
		return nil, err
	}
	statuses, err := s.Lab.Store.ProxyStatuses()
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", s.Lab.Name(), err)
	}
	st := &State{
		Lab: s.Lab.Name(), Generation: gen, Client: s.client(), Topology: svg.String(),
		Nodes: []NodeView{}, Services: ServiceRefs(objs), Trace: s.trace(),
	}
	for _, n := range s.Lab.Topology.Spec.Nodes {
		st.Nodes = append(st.Nodes, s.node(ctx, n.Name, statuses))
	}
	return st, nil
}

// node reads one node: its proxy's status and its kernel's counters.
func (s *LabSource) node(ctx context.Context, name string, statuses map[string]labstore.ProxyStatus) NodeView {
	ps, ok := statuses[name]
	nv := NodeView{Name: name, Mode: ps.Mode, Backend: ps.Backend, Healthy: ps.Healthy, Error: ps.Error}
	if !ok {
		nv.Error = "its proxy has not reported yet"
	}
	var err error
	if ps.Mode == string(topology.ProxyModeIPVS) {
		cmd, cerr := s.Lab.Command(name, hostprog.IPVSAdm, "-Ln", "--stats", "--exact")
		var out []byte
		if out, err = runBounded(ctx, cmd, cerr); err == nil {
			nv.VirtualServers, err = ParseIPVSStats(string(out))
		}
	} else {
		cmd, cerr := s.saveCommand(name)
		var out []byte
		if out, err = runBounded(ctx, cmd, cerr); err == nil {
			nv.Chains, err = ParseNATCounters(string(out))
		}
	}
	if err != nil {
		nv.Error = strings.TrimSpace(strings.Join([]string{nv.Error, err.Error()}, "; "))
	}
	return nv
}

// saveCommand is `iptables-save -c -t nat` of the lab's iptables backend
// in the node's namespace.
func (s *LabSource) saveCommand(node string) (*exec.Cmd, error) {
	switch s.Lab.Topology.Spec.Proxy.IPTablesBackend {
	case topology.BackendLegacy:
		return s.Lab.Command(node, hostprog.IPTablesLegacySave, "-c", "-t", "nat")
	case topology.BackendNFT:
		return s.Lab.Command(node, hostprog.IPTablesNFTSave, "-c", "-t", "nat")
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
	res, err := s.Lab.Traffic(from, traffic.Options{Target: ref.Target, Connections: count, Deadline: TrafficDeadline}, labs.Options{Binary: s.Binary})
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
