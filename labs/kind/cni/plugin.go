package cni

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"

	"github.com/svclab/svclab/labs/podnet"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// CalicoGateway is the pods' default gateway in the Calico variant: no
// interface has it, the host side of every veth answers ARP for it.
var CalicoGateway = net.IPv4(169, 254, 1, 1)

// pluginConf is the part of the network configuration the plugin reads.
type pluginConf struct {
	CNIVersion string          `json:"cniVersion"`
	Name       string          `json:"name"`
	MTU        int             `json:"mtu"`
	IPAM       json.RawMessage `json:"ipam"`
}

// cniError is the CNI error result.
type cniError struct {
	CNIVersion string `json:"cniVersion"`
	Code       int    `json:"code"`
	Msg        string `json:"msg"`
	Details    string `json:"details,omitempty"`
}

// RunPlugin is the CNI plugin's main: CNI_COMMAND and friends in the
// environment, the network configuration on stdin, the result on stdout.
func RunPlugin(stdin io.Reader, stdout io.Writer) error {
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	var conf pluginConf
	_ = json.Unmarshal(raw, &conf)
	if conf.CNIVersion == "" {
		conf.CNIVersion = "0.4.0"
	}
	res, err := dispatch(os.Getenv("CNI_COMMAND"), raw, conf)
	if err != nil {
		json.NewEncoder(stdout).Encode(cniError{CNIVersion: conf.CNIVersion, Code: 999, Msg: err.Error()})
		return err
	}
	if res != nil {
		_, err = stdout.Write(res)
	}
	return err
}

func dispatch(command string, raw []byte, conf pluginConf) ([]byte, error) {
	switch command {
	case "VERSION":
		return []byte(`{"cniVersion":"1.0.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0"]}`), nil
	case "ADD":
		return add(raw, conf)
	case "DEL":
		return nil, del(raw)
	case "CHECK":
		return nil, nil
	}
	return nil, fmt.Errorf("CNI_COMMAND %q: want ADD, DEL, CHECK or VERSION", command)
}

// podArgs reads K8S_POD_NAMESPACE and K8S_POD_NAME from CNI_ARGS.
func podArgs() (namespace, name string) {
	for _, kv := range strings.Split(os.Getenv("CNI_ARGS"), ";") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "K8S_POD_NAMESPACE":
			namespace = v
		case "K8S_POD_NAME":
			name = v
		}
	}
	return namespace, name
}

// hostVethName is Calico's name for the pod's host-side veth.
func hostVethName() string {
	ns, name := podArgs()
	if name == "" {
		return "cali" + shortHash(os.Getenv("CNI_CONTAINERID"))
	}
	return podnet.CalicoVethName(ns, name)
}

func shortHash(s string) string {
	sum := VTEPMAC(s, "cali") // any stable hash will do
	return fmt.Sprintf("%x", []byte(sum))[:11]
}

// ipamResult is the part of host-local's result the plugin uses.
type ipamResult struct {
	IPs []struct {
		Address string `json:"address"`
	} `json:"ips"`
}

// runIPAM runs the ipam plugin (host-local) with the same environment and
// the network configuration on stdin, as CNI's delegation does.
func runIPAM(raw []byte) ([]byte, error) {
	var ipam struct {
		Type string `json:"type"`
	}
	var conf struct {
		IPAM json.RawMessage `json:"ipam"`
	}
	if err := json.Unmarshal(raw, &conf); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(conf.IPAM, &ipam); err != nil || ipam.Type == "" {
		return nil, fmt.Errorf("network configuration has no ipam.type")
	}
	paths := strings.Split(os.Getenv("CNI_PATH"), ":")
	var bin string
	for _, p := range append(paths, "/opt/cni/bin") {
		if _, err := os.Stat(p + "/" + ipam.Type); err == nil {
			bin = p + "/" + ipam.Type
			break
		}
	}
	if bin == "" {
		return nil, fmt.Errorf("ipam plugin %s not found in CNI_PATH %s", ipam.Type, os.Getenv("CNI_PATH"))
	}
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(raw)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s %s", bin, os.Getenv("CNI_COMMAND"), err, out.String(), errb.String())
	}
	return out.Bytes(), nil
}

// add attaches the pod Calico's way:
//
//	ip link add <cali…> type veth peer name eth0 netns <pod>
//	(pod) ip addr add <ip>/32 dev eth0; ip route add 169.254.1.1 dev eth0 scope link
//	(pod) ip route add default via 169.254.1.1 dev eth0
//	(node) sysctl net.ipv4.conf.<cali…>.proxy_arp=1; ip route add <ip>/32 dev <cali…> scope link
func add(raw []byte, conf pluginConf) ([]byte, error) {
	out, err := runIPAM(raw)
	if err != nil {
		return nil, err
	}
	var ipamRes ipamResult
	if err := json.Unmarshal(out, &ipamRes); err != nil || len(ipamRes.IPs) == 0 {
		return nil, fmt.Errorf("ipam gave no address: %s", out)
	}
	pfx, err := netip.ParsePrefix(ipamRes.IPs[0].Address)
	if err != nil {
		return nil, err
	}
	ip := net.IP(pfx.Addr().AsSlice())
	ifname := os.Getenv("CNI_IFNAME")
	if ifname == "" {
		ifname = "eth0"
	}
	mtu := conf.MTU
	if mtu == 0 {
		mtu = PodMTU
	}
	podNS, err := netns.GetFromPath(os.Getenv("CNI_NETNS"))
	if err != nil {
		return nil, fmt.Errorf("open CNI_NETNS %s: %w", os.Getenv("CNI_NETNS"), err)
	}
	defer podNS.Close()
	hostName := hostVethName()
	if old, err := netlink.LinkByName(hostName); err == nil {
		netlink.LinkDel(old)
	}
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: hostName, MTU: mtu, HardwareAddr: podnet.CalicoHostMAC},
		PeerName:      ifname,
		PeerNamespace: netlink.NsFd(int(podNS)),
		PeerMTU:       uint32(mtu),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("ip link add %s type veth peer name %s netns %s: %w", hostName, ifname, os.Getenv("CNI_NETNS"), err)
	}
	undo := func() { netlink.LinkDel(veth) }
	pod, err := netlink.NewHandleAt(podNS, unix.NETLINK_ROUTE)
	if err != nil {
		undo()
		return nil, err
	}
	defer pod.Close()
	podLink, err := pod.LinkByName(ifname)
	if err != nil {
		undo()
		return nil, err
	}
	gw := &net.IPNet{IP: CalicoGateway, Mask: net.CIDRMask(32, 32)}
	for _, step := range []func() error{
		func() error {
			return pod.AddrAdd(podLink, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}})
		},
		func() error { return pod.LinkSetUp(podLink) },
		func() error {
			return pod.RouteAdd(&netlink.Route{LinkIndex: podLink.Attrs().Index, Dst: gw, Scope: netlink.SCOPE_LINK})
		},
		func() error {
			return pod.RouteAdd(&netlink.Route{LinkIndex: podLink.Attrs().Index, Gw: CalicoGateway})
		},
		func() error {
			return os.WriteFile("/proc/sys/net/ipv4/conf/"+hostName+"/proxy_arp", []byte("1"), 0o644)
		},
		func() error { return netlink.LinkSetUp(veth) },
		func() error {
			return netlink.RouteReplace(&netlink.Route{LinkIndex: veth.Attrs().Index, Dst: &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}, Scope: netlink.SCOPE_LINK})
		},
	} {
		if err := step(); err != nil {
			undo()
			return nil, fmt.Errorf("attaching %s (%s): %w", hostName, ip, err)
		}
	}
	res := map[string]any{
		"cniVersion": conf.CNIVersion,
		"interfaces": []map[string]string{
			{"name": hostName, "mac": podnet.CalicoHostMAC.String()},
			{"name": ifname, "mac": podLink.Attrs().HardwareAddr.String(), "sandbox": os.Getenv("CNI_NETNS")},
		},
		"ips":    []map[string]any{{"version": "4", "address": ip.String() + "/32", "interface": 1}},
		"routes": []map[string]string{{"dst": "0.0.0.0/0", "gw": CalicoGateway.String()}},
	}
	return json.Marshal(res)
}

// del releases the address and removes the host-side veth (gone already
// when the pod's namespace was deleted).
func del(raw []byte) error {
	_, ipamErr := runIPAM(raw)
	if l, err := netlink.LinkByName(hostVethName()); err == nil {
		netlink.LinkDel(l)
	}
	return ipamErr
}
