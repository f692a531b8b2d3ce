package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/model"
)

// TestIntegrationNFTablesBackend drives the nftables backend against the
// real kernel in a network namespace of its own: the table exists as soon
// as the backend does, a TCP connection to a cluster IP reaches the
// endpoint through the rules, a changed endpoint is a partial sync the
// kernel accepts, and a removed service's chains are gone a second later.
func TestIntegrationNFTablesBackend(t *testing.T) {
	roottest.Require(t, "creates a network namespace and nftables rules in it")
	if _, err := exec.LookPath("nft"); err != nil {
		t.Fatalf("nft not installed (make deps installs nftables): %v", err)
	}
	ns := roottest.Netns(t, "svclabnft")
	run(t, "ip", "-n", ns, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
	run(t, "ip", "-n", ns, "addr", "add", "192.168.0.10/24", "dev", "v0")
	run(t, "ip", "-n", ns, "link", "set", "v0", "up")
	run(t, "ip", "-n", ns, "link", "set", "v1", "up")
	run(t, "ip", "-n", ns, "route", "add", "10.96.0.0/16", "via", "192.168.0.1", "dev", "v0", "onlink")
	run(t, "ip", "-n", ns, "addr", "add", "10.244.1.1/32", "dev", "lo")
	run(t, "ip", "-n", ns, "addr", "add", "10.244.1.2/32", "dev", "lo")

	roottest.InNetns(t, ns, func() error {
		b, err := newNFTablesBackend(parseConfig(t, "mode: nftables\n"), corev1.IPv4Protocol, nodePortSelection{}, slog.New(slog.DiscardHandler))
		if err != nil {
			return err
		}
		if out := nft(t, ns); !strings.Contains(out, "table ip kube-proxy") {
			return fmt.Errorf("no table right after the backend started:\n%s", out)
		}
		ln, err := net.Listen("tcp", "10.244.1.1:8080")
		if err != nil {
			return err
		}
		defer ln.Close()
		go serveName(ln, "pod-a")

		st, err := b.Sync(twoServicesSnap("10.244.1.1"))
		if err != nil || !st.Full {
			return fmt.Errorf("first sync: %+v, %v", st, err)
		}
		if got, err := fetch("10.96.0.20:80"); err != nil || got != "pod-a" {
			return fmt.Errorf("cluster IP 10.96.0.20:80 answered %q, %v; want pod-a\n%s", got, err, nft(t, ns))
		}

		ln2, err := net.Listen("tcp", "10.244.1.2:8080")
		if err != nil {
			return err
		}
		defer ln2.Close()
		go serveName(ln2, "pod-b")
		st, err = b.Sync(twoServicesSnap("10.244.1.2"))
		if err != nil || st.Full {
			return fmt.Errorf("endpoint change: %+v, %v; want a partial sync", st, err)
		}
		if got, err := fetch("10.96.0.20:80"); err != nil || got != "pod-b" {
			return fmt.Errorf("after the endpoint moved, 10.96.0.20:80 answered %q, %v; want pod-b", got, err)
		}

		onlyWeb := twoServicesSnap("10.244.1.2")
		onlyWeb.ServicePorts = onlyWeb.ServicePorts[1:] // drop default/api
		if _, err := b.Sync(onlyWeb); err != nil {
			return err
		}
		if out := nft(t, ns); !strings.Contains(out, "default/api/tcp/http") {
			return fmt.Errorf("api's chain deleted at once; upstream flushes it and deletes it a second later")
		}
		// Here the condition is time itself: a sync deletes the chains the
		// sync before it flushed a second or more earlier (a sync between
		// flushes them again and restarts the second), so this sleep waits
		// for no other actor, and a slow host only lengthens it.
		time.Sleep(1100 * time.Millisecond)
		if _, err := b.Sync(onlyWeb); err != nil {
			return err
		}
		if out := nft(t, ns); strings.Contains(out, "default/api/tcp/http") {
			return fmt.Errorf("api's chain still there after a second:\n%s", out)
		}
		return nil
	})
}

// TestIntegrationModeSwitchCleansOtherModes: starting in nftables mode
// removes the iptables mode's chains; starting in iptables mode removes
// the nftables table (upstream's platformCleanup).
func TestIntegrationModeSwitchCleansOtherModes(t *testing.T) {
	roottest.Require(t, "creates a network namespace, iptables chains and nftables tables in it")
	ns := roottest.Netns(t, "svclabsw")
	log := slog.New(slog.DiscardHandler)
	roottest.InNetns(t, ns, func() error {
		ipt, err := newIPTablesBackend(parseConfig(t, ""), "", corev1.IPv4Protocol, nodePortSelection{}, log)
		if err != nil {
			return err
		}
		if _, err := ipt.Sync(twoServicesSnap("10.244.1.1")); err != nil {
			return err
		}
		if !strings.Contains(iptablesSave(t, ns), "KUBE-SERVICES") {
			return fmt.Errorf("iptables mode wrote no KUBE-SERVICES")
		}
		cleanUpOtherModes(config.ModeNFTables, "", log)
		if out := iptablesSave(t, ns); strings.Contains(out, "KUBE-SERVICES") || strings.Contains(out, "KUBE-SVC-") {
			return fmt.Errorf("iptables mode's chains left after starting in nftables mode:\n%s", out)
		}
		nb, err := newNFTablesBackend(parseConfig(t, "mode: nftables\n"), corev1.IPv4Protocol, nodePortSelection{}, log)
		if err != nil {
			return err
		}
		if _, err := nb.Sync(twoServicesSnap("10.244.1.1")); err != nil {
			return err
		}
		cleanUpOtherModes(config.ModeIPTables, "", log)
		if out := nft(t, ns); strings.Contains(out, "kube-proxy") {
			return fmt.Errorf("nftables table left after starting in iptables mode:\n%s", out)
		}

		// `svclab proxy --cleanup` removes every mode's state, the table too.
		if _, err := nb.Sync(twoServicesSnap("10.244.1.1")); err != nil {
			return err
		}
		ipt2, err := newIPTablesBackend(parseConfig(t, ""), "", corev1.IPv4Protocol, nodePortSelection{}, log) // a new proxy: its first sync is a full one
		if err != nil {
			return err
		}
		if _, err := ipt2.Sync(twoServicesSnap("10.244.1.1")); err != nil {
			return err
		}
		if err := Cleanup(""); err != nil {
			return err
		}
		if out := nft(t, ns); strings.Contains(out, "kube-proxy") {
			return fmt.Errorf("nftables table left after Cleanup:\n%s", out)
		}
		if out := iptablesSave(t, ns); strings.Contains(out, "KUBE-SERVICES") {
			return fmt.Errorf("iptables chains left after Cleanup:\n%s", out)
		}
		return nil
	})
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

func nft(t *testing.T, ns string) string {
	out, _ := exec.Command("ip", "netns", "exec", ns, "nft", "list", "ruleset").CombinedOutput()
	return string(out)
}

func iptablesSave(t *testing.T, ns string) string {
	out, _ := exec.Command("ip", "netns", "exec", ns, "iptables-save").CombinedOutput()
	return string(out)
}

func serveName(ln net.Listener, name string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = io.WriteString(c, name)
		c.Close()
	}
}

func fetch(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

// twoServicesSnap is default/api (10.96.0.21:80, endpoint 10.244.1.1) and
// default/web (10.96.0.20:80, NodePort 30080, one endpoint webIP:8080).
func twoServicesSnap(webIP string) *model.Snapshot {
	svc := func(name, ip string, nodePort int32) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
				Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: nodePort}}}}
		if nodePort != 0 {
			s.Spec.Type = corev1.ServiceTypeNodePort
		}
		return s
	}
	slice := func(name, ip string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(int32(8080))}},
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, NodeName: ptr.To("node-a")}},
		}
	}
	return model.Build(
		[]*corev1.Service{svc("api", "10.96.0.21", 0), svc("web", "10.96.0.20", 30080)},
		[]*discoveryv1.EndpointSlice{slice("api", "10.244.1.1"), slice("web", webIP)}, "node-a")
}
