package cni

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/podnet"
)

// TestIntegrationAddAttachesCalicoStyle runs the plugin's ADD with a fake
// ipam plugin, the node being a network namespace of its own: the pod gets
// its address as a /32 and a default route via 169.254.1.1, the node's end
// answers ARP for it and routes the address to the pod.
func TestIntegrationAddAttachesCalicoStyle(t *testing.T) {
	roottest.Require(t, "the plugin makes a veth pair between two network namespaces")
	node, pod := roottest.Netns(t, "cninode"), roottest.Netns(t, "cnipod")
	fakeIPAM(t, pod)
	hostName := podnet.CalicoVethName("default", "web")
	raw := []byte(`{"cniVersion":"0.4.0","name":"k8s-pod-network","mtu":1400,"ipam":{"type":"fake-ipam"}}`)

	var result []byte
	roottest.InNetns(t, node, func() error {
		var err error
		if result, err = add(raw, pluginConf{CNIVersion: "0.4.0", MTU: 1400}); err != nil {
			return err
		}
		return checkNodeEnd(hostName)
	})
	roottest.InNetns(t, pod, func() error { return checkPodEnd() })

	var res struct {
		IPs []struct {
			Address string `json:"address"`
		} `json:"ips"`
		Interfaces []struct {
			Name, Sandbox string
		} `json:"interfaces"`
	}
	if err := json.Unmarshal(result, &res); err != nil || len(res.IPs) != 1 || res.IPs[0].Address != "10.244.1.5/32" ||
		len(res.Interfaces) != 2 || res.Interfaces[0].Name != hostName || res.Interfaces[1].Sandbox != "/run/netns/"+pod {
		t.Errorf("result %s (%v)", result, err)
	}
}

// TestIntegrationAddNamesTheFailedStep: when a step fails (here the pod
// has a default route already), ADD says which one and removes the veth.
func TestIntegrationAddNamesTheFailedStep(t *testing.T) {
	roottest.Require(t, "the plugin makes a veth pair between two network namespaces")
	node, pod := roottest.Netns(t, "cninode"), roottest.Netns(t, "cnipod")
	for _, args := range [][]string{
		{"link", "add", "d0", "type", "veth", "peer", "name", "d1"}, {"addr", "add", "192.0.2.1/24", "dev", "d0"},
		{"link", "set", "d0", "up"}, {"route", "add", "default", "via", "192.0.2.2"},
	} {
		if out, err := exec.Command("ip", append([]string{"-n", pod}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	fakeIPAM(t, pod)
	raw := []byte(`{"cniVersion":"0.4.0","name":"k8s-pod-network","ipam":{"type":"fake-ipam"}}`)
	hostName := podnet.CalicoVethName("default", "web")
	roottest.InNetns(t, node, func() error {
		_, err := add(raw, pluginConf{CNIVersion: "0.4.0"})
		want := "attaching " + hostName + " (10.244.1.5): (pod) ip route add default via 169.254.1.1 dev eth0: "
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			return fmt.Errorf("add: %v; want %q…", err, want)
		}
		if _, err := netlink.LinkByName(hostName); err == nil {
			return fmt.Errorf("the failed ADD left %s", hostName)
		}
		return nil
	})
}

// fakeIPAM sets the CNI environment of an ADD of pod default/web into the
// namespace pod, with an ipam plugin that always gives 10.244.1.5/24.
func fakeIPAM(t *testing.T, pod string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fake-ipam"), []byte("#!/bin/sh\necho '{\"cniVersion\":\"0.4.0\",\"ips\":[{\"address\":\"10.244.1.5/24\"}]}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CNI_PATH", dir)
	t.Setenv("CNI_NETNS", "/run/netns/"+pod)
	t.Setenv("CNI_IFNAME", "eth0")
	t.Setenv("CNI_CONTAINERID", "c0ffee")
	t.Setenv("CNI_ARGS", "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web")
}

// checkNodeEnd: the node's end is up with Calico's MAC and proxy ARP, and
// routes the pod's /32 to it.
func checkNodeEnd(hostName string) error {
	l, err := netlink.LinkByName(hostName)
	if err != nil {
		return err
	}
	if l.Attrs().Flags&net.FlagUp == 0 || l.Attrs().HardwareAddr.String() != podnet.CalicoHostMAC.String() || l.Attrs().MTU != 1400 {
		return fmt.Errorf("node end %s: flags %v, MAC %s, MTU %d", hostName, l.Attrs().Flags, l.Attrs().HardwareAddr, l.Attrs().MTU)
	}
	arp, err := os.ReadFile("/proc/sys/net/ipv4/conf/" + hostName + "/proxy_arp")
	if err != nil || strings.TrimSpace(string(arp)) != "1" {
		return fmt.Errorf("proxy_arp of %s: %q, %v", hostName, arp, err)
	}
	routes, err := netlink.RouteList(l, netlink.FAMILY_V4)
	if err != nil {
		return err
	}
	for _, r := range routes {
		if r.Dst != nil && r.Dst.String() == "10.244.1.5/32" && r.Scope == netlink.SCOPE_LINK {
			return nil
		}
	}
	return fmt.Errorf("no route 10.244.1.5/32 dev %s scope link: %v", hostName, routes)
}

// checkPodEnd: eth0 is up with the address as a /32 and the default route
// via 169.254.1.1.
func checkPodEnd() error {
	l, err := netlink.LinkByName("eth0")
	if err != nil {
		return err
	}
	addrs, err := netlink.AddrList(l, netlink.FAMILY_V4)
	if err != nil || len(addrs) != 1 || addrs[0].IPNet.String() != "10.244.1.5/32" {
		return fmt.Errorf("eth0's addresses: %v, %v", addrs, err)
	}
	routes, err := netlink.RouteList(l, netlink.FAMILY_V4)
	if err != nil {
		return err
	}
	for _, r := range routes {
		if (r.Dst == nil || r.Dst.String() == "0.0.0.0/0") && r.Gw.Equal(CalicoGateway) {
			return nil
		}
	}
	return fmt.Errorf("no default route via %s: %v", CalicoGateway, routes)
}
