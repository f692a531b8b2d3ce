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
