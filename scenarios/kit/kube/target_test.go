package kube

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestNewUnreachableClusterIsOneClearError: a kubeconfig whose server does
// not answer gives one error naming the kubeconfig and the server, and
// New creates nothing (it never got as far as the node agent).
func TestNewUnreachableClusterIsOneClearError(t *testing.T) {
	// A port nothing listens on: listen, note it, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	cfg := &rest.Config{Host: "https://" + addr, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, BearerToken: "x"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	target, err := New(ctx, cfg, Options{Source: "/tmp/unreachable.kubeconfig", Image: "svclab/netexec:dev", PullPolicy: "Never"})
	if err == nil {
		t.Fatalf("New with an unreachable server: got a target %+v, want an error", target)
	}
	for _, want := range []string{"/tmp/unreachable.kubeconfig", "https://" + addr, "does not answer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A product promise with a huge margin: a refused connection is one
	// error in milliseconds; 20 s is past even kubeconfig.ReachTimeout.
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the error took %s: an unreachable cluster should fail fast", took)
	}
}

// TestNewStartsTheAgentAndCloseRemovesIt: New sweeps (nothing to sweep),
// makes the agent's namespace labelled as the run's, holds the run's
// heartbeat there, starts the agent's DaemonSet and waits for it; Close
// deletes the namespace.
func TestNewStartsTheAgentAndCloseRemovesIt(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1", "n2")
	var out strings.Builder
	ctx := context.Background()
	target, err := New(ctx, cfg, Options{Source: "fake", Image: "reg/svclab@sha256:1", PullPolicy: "IfNotPresent", Out: &out, RunID: "run-1"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	nss := f.list("namespaces", "")
	if len(nss) != 1 {
		t.Fatalf("namespaces %v, want the agent's only", nss)
	}
	labels := meta(nss[0])["labels"].(map[string]any)
	if labels[ManagedByLabel] != ManagedBy || labels[RunLabel] != "run-1" || labels[ComponentLabel] != ComponentAgent {
		t.Errorf("agent namespace labels %v, want managed-by, run and component", labels)
	}
	ns := target.agentNS
	if f.get("leases", ns, RunLeaseName) == nil {
		t.Errorf("no heartbeat Lease %s/%s", ns, RunLeaseName)
	}
	if f.get("daemonsets", ns, agentName) == nil {
		t.Errorf("no DaemonSet %s/%s", ns, agentName)
	}
	if !strings.Contains(out.String(), "sweep: nothing left by earlier runs") {
		t.Errorf("output %q does not say what the sweep found", out.String())
	}
	nodes, err := target.nodes(ctx)
	if err != nil || len(nodes) != 2 {
		t.Errorf("nodes: %v %v, want n1 and n2", nodes, err)
	}
	if err := target.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if nss := f.list("namespaces", ""); len(nss) != 0 {
		t.Errorf("after Close: namespaces %v", nss)
	}
}

// TestApplyLabelsTheRunAndMountsNoToken: what a scenario applies is
// labelled as the run's, and its pods (a Pod's, a Deployment's template)
// get no service-account token.
func TestApplyLabelsTheRunAndMountsNoToken(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	ctx := context.Background()
	target, err := connect(ctx, cfg, Options{Source: "fake", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := target.apply(ctx, "ns", scenarioManifests); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct{ resource, name, spec string }{
		{"deployments", "web", "spec.template.spec"},
		{"pods", "probe", "spec"},
	} {
		obj := f.get(o.resource, "ns", o.name)
		if obj == nil {
			t.Fatalf("no %s ns/%s", o.resource, o.name)
		}
		if got := field(obj, o.spec+".automountServiceAccountToken"); got != false {
			t.Errorf("%s ns/%s: automountServiceAccountToken %v, want false", o.resource, o.name, got)
		}
		labels, _ := meta(obj)["labels"].(map[string]any)
		if labels[ManagedByLabel] != ManagedBy || labels[RunLabel] != "run-1" {
			t.Errorf("%s ns/%s: labels %v, want managed-by and the run", o.resource, o.name, labels)
		}
	}
}
