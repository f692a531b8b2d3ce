package kinde2e

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/labs/kind"
)

// registryAddr is where clusters/kind/foreign.yaml's containerd mirror
// sends image pulls: an address of RFC 2544's benchmarking range on the
// loopback of svclab's dockerd namespace, which every kind node reaches
// through its default gateway (that namespace's bridge). Nothing outside
// that namespace, the host included, gets a route to it.
var registryAddr = netip.MustParseAddrPort("198.18.0.254:5000")

// startRegistry serves go-containerregistry's registry (the OCI
// distribution API, in memory) at registryAddr, inside svclab's dockerd
// namespace, until the test ends; then the address goes too.
func startRegistry(t *testing.T) {
	t.Helper()
	ns, err := netns.GetFromName(kind.DockerNamespace)
	if err != nil {
		t.Fatalf("namespace %s (svclab's dockerd runs there once a cluster exists): %v", kind.DockerNamespace, err)
	}
	t.Cleanup(func() { ns.Close() })
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	lo, err := h.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: registryAddr.Addr().AsSlice(), Mask: net.CIDRMask(32, 32)}}
	if err := h.AddrAdd(lo, addr); err != nil && !errors.Is(err, syscall.EEXIST) {
		t.Fatalf("adding %s to lo in %s: %v", registryAddr.Addr(), kind.DockerNamespace, err)
	}
	t.Cleanup(func() { h.AddrDel(lo, addr) }) //nolint:errcheck // the namespace goes with the last cluster anyway
	var ln net.Listener
	if err := nsthread.Do(kind.DockerNamespace, ns, func() (err error) {
		ln, err = net.Listen("tcp", registryAddr.String())
		return err
	}); err != nil {
		t.Fatalf("listening on %s in %s: %v", registryAddr, kind.DockerNamespace, err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
}
