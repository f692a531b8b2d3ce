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
//
// A failed step removes the veth (both ends) and names the step.
func add(raw []byte, conf pluginConf) ([]byte, error) {
	ip, err := allocateAddress(raw)
	if err != nil {
		return nil, err
	}
	a := &attachment{ip: ip, hostName: hostVethName(), ifname: os.Getenv("CNI_IFNAME"), mtu: conf.MTU, netnsPath: os.Getenv("CNI_NETNS")}
	if a.ifname == "" {
		a.ifname = "eth0"
	}
	if a.mtu == 0 {
		a.mtu = PodMTU
	}
	podNS, err := netns.GetFromPath(a.netnsPath)
	if err != nil {
		return nil, fmt.Errorf("open CNI_NETNS %s: %w", a.netnsPath, err)
	}
	defer podNS.Close()
	if err := a.createVeth(podNS); err != nil {
		return nil, err
	}
	pod, err := netlink.NewHandleAt(podNS, unix.NETLINK_ROUTE)
	if err != nil {
		a.removeVeth()
		return nil, err
	}
	defer pod.Close()
	if a.podLink, err = pod.LinkByName(a.ifname); err != nil {
		a.removeVeth()
		return nil, err
	}
	for _, step := range a.steps(pod) {
		if err := step.run(); err != nil {
			a.removeVeth()
			return nil, fmt.Errorf("attaching %s (%s): %s: %w", a.hostName, ip, step.name, err)
		}
	}
	return a.result(conf.CNIVersion)
}

// allocateAddress asks the ipam plugin for the pod's address.
func allocateAddress(raw []byte) (net.IP, error) {
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
	return net.IP(pfx.Addr().AsSlice()), nil
}

// attachment is one pod's veth pair, as add makes it.
type attachment struct {
	ip        net.IP
	hostName  string // the node's end (cali…)
	ifname    string // the pod's end (eth0)
	mtu       int
	netnsPath string // the pod's network namespace (CNI_NETNS)
	veth      *netlink.Veth
	podLink   netlink.Link // the pod's end, once made
}

// createVeth makes the veth pair (a leftover of the same name goes
// first): the node's end with Calico's MAC, the pod's in its namespace.
func (a *attachment) createVeth(podNS netns.NsHandle) error {
	if old, err := netlink.LinkByName(a.hostName); err == nil {
		netlink.LinkDel(old)
	}
	a.veth = &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: a.hostName, MTU: a.mtu, HardwareAddr: podnet.CalicoHostMAC},
		PeerName:      a.ifname,
		PeerNamespace: netlink.NsFd(int(podNS)),
		PeerMTU:       uint32(a.mtu),
	}
	if err := netlink.LinkAdd(a.veth); err != nil {
		return fmt.Errorf("ip link add %s type veth peer name %s netns %s: %w", a.hostName, a.ifname, a.netnsPath, err)
	}
	return nil
}

// removeVeth deletes the pair (both ends go).
func (a *attachment) removeVeth() { netlink.LinkDel(a.veth) }

// attachStep is one named step of add, named by the command that does
// the same.
type attachStep struct {
	name string
	run  func() error
}

// steps configure both ends once the pair exists; pod is a netlink
// handle in the pod's namespace.
func (a *attachment) steps(pod *netlink.Handle) []attachStep {
	podIndex := a.podLink.Attrs().Index
	host32 := &net.IPNet{IP: a.ip, Mask: net.CIDRMask(32, 32)}
	gw := &net.IPNet{IP: CalicoGateway, Mask: net.CIDRMask(32, 32)}
	return []attachStep{
		{fmt.Sprintf("(pod) ip addr add %s dev %s", host32, a.ifname), func() error {
			return pod.AddrAdd(a.podLink, &netlink.Addr{IPNet: host32})
		}},
		{fmt.Sprintf("(pod) ip link set %s up", a.ifname), func() error { return pod.LinkSetUp(a.podLink) }},
		{fmt.Sprintf("(pod) ip route add %s dev %s scope link", CalicoGateway, a.ifname), func() error {
			return pod.RouteAdd(&netlink.Route{LinkIndex: podIndex, Dst: gw, Scope: netlink.SCOPE_LINK})
		}},
		{fmt.Sprintf("(pod) ip route add default via %s dev %s", CalicoGateway, a.ifname), func() error {
			return pod.RouteAdd(&netlink.Route{LinkIndex: podIndex, Gw: CalicoGateway})
		}},
		{fmt.Sprintf("(node) sysctl net.ipv4.conf.%s.proxy_arp=1", a.hostName), func() error {
			return os.WriteFile("/proc/sys/net/ipv4/conf/"+a.hostName+"/proxy_arp", []byte("1"), 0o644)
		}},
		{fmt.Sprintf("(node) ip link set %s up", a.hostName), func() error { return netlink.LinkSetUp(a.veth) }},
		{fmt.Sprintf("(node) ip route replace %s dev %s scope link", host32, a.hostName), func() error {
			return netlink.RouteReplace(&netlink.Route{LinkIndex: a.veth.Attrs().Index, Dst: host32, Scope: netlink.SCOPE_LINK})
		}},
	}
}

// result is the CNI result of the attachment.
func (a *attachment) result(cniVersion string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"cniVersion": cniVersion,
		"interfaces": []map[string]string{
			{"name": a.hostName, "mac": podnet.CalicoHostMAC.String()},
			{"name": a.ifname, "mac": a.podLink.Attrs().HardwareAddr.String(), "sandbox": a.netnsPath},
		},
		"ips":    []map[string]any{{"version": "4", "address": a.ip.String() + "/32", "interface": 1}},
		"routes": []map[string]string{{"dst": "0.0.0.0/0", "gw": CalicoGateway.String()}},
	})
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
