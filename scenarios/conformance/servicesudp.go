package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/svclab/svclab/labs/agents/conntrack"
	"github.com/svclab/svclab/scenarios/kit"
)

// serviceSpecsUDP registers the first batch of Service behaviour specs,
// which any proxy must pass: ClusterIP over TCP and UDP on one port number
// and a multi-port Service (clusterip.go), a Service without endpoints
// refusing at once (noendpoints.go), and a UDP client kept working when
// its backend is replaced, the stale conntrack entry cleared
// (udpconntrack.go).
func (s *suite) serviceSpecsUDP(f familyRun) {
	s.clusterIPSpecs(f)
	s.multiPortSpecs(f)
	s.noEndpointsSpecs(f)
	s.udpConntrackSpecs(f)
}

// IP protocol numbers of conntrack entries.
const (
	protoTCP uint8 = 6
	protoUDP uint8 = 17
)

// bothProtocolsContainer is a netexec container (one YAML line, a list
// item) serving HTTP over TCP and agnhost's UDP commands on one port
// number, with agnhost's own flags, so the scenario image may be agnhost;
// its containerPorts are named tcpName and udpName (unnamed when "").
func (s *suite) bothProtocolsContainer(name string, port int, tcpName, udpName string) string {
	named := func(n string) string {
		if n == "" {
			return ""
		}
		return "name: " + n + ", "
	}
	return fmt.Sprintf("- {name: %s, image: %s, imagePullPolicy: %s, args: [netexec, --http-port=%d, --udp-port=%d], "+
		"ports: [{%scontainerPort: %d, protocol: TCP}, {%scontainerPort: %d, protocol: UDP}], "+
		"readinessProbe: {httpGet: {path: /hostname, port: %d}, periodSeconds: 1}}",
		name, s.opts.Image, s.opts.PullPolicy, port, port, named(tcpName), port, named(udpName), port, port)
}

// bothProtocolsPod is a bare pod labelled app=<app> whose containers are
// the given bothProtocolsContainer lines.
func bothProtocolsPod(name, app string, containers ...string) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata: {name: %s, labels: {app: %s}}
spec:
  %s
  containers:
  %s
`, name, app, tolerateAll, strings.Join(containers, "\n  "))
}

// protocolView is a Workspace whose Conntrack shows the entries of one
// IP protocol only: TCP and UDP clients may have the same ip:port, so
// trackedFlows, which matches by address, is given one protocol's table.
type protocolView struct {
	kit.Workspace
	proto uint8
}

// Conntrack implements kit.Workspace.
func (v protocolView) Conntrack(ctx context.Context, node string) ([]conntrack.Flow, error) {
	flows, err := v.Workspace.Conntrack(ctx, node)
	var out []conntrack.Flow
	for _, f := range flows {
		if f.Proto == v.proto {
			out = append(out, f)
		}
	}
	return out, err
}
