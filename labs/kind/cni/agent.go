package cni

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// AgentOptions configure RunAgent.
type AgentOptions struct {
	Variant     string
	NodeName    string
	ClusterCIDR string    // the pod network, for the masquerade rules: a comma list on a dual-stack cluster (IPv4 first)
	Kubeconfig  string    // "" = in-cluster config
	HostRoot    string    // where the node's / is mounted (default /host)
	Binary      string    // the svclab binary to install (default: this executable)
	Out         io.Writer // log
	Interval    time.Duration
}

// RunAgent installs the plugin and the node's CNI config, then keeps the
// overlay in step with the Node objects until ctx is done: one VXLAN
// device per family of the cluster CIDRs (flannel.1, and flannel-v6.1
// for an IPv6 one, as flanneld with EnableIPv6).
func RunAgent(ctx context.Context, opts AgentOptions) error {
	if opts.NodeName == "" {
		return fmt.Errorf("NODE_NAME is not set (the DaemonSet passes spec.nodeName)")
	}
	nets, err := familyNetsOf(opts.Variant, opts.ClusterCIDR)
	if err != nil {
		return err
	}
	if opts.HostRoot == "" {
		opts.HostRoot = "/host"
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Interval == 0 {
		opts.Interval = 2 * time.Second
	}
	if opts.Binary == "" {
		if opts.Binary, err = os.Executable(); err != nil {
			return err
		}
	}
	cfg, err := clientConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := enableForwarding(nets); err != nil {
		return err
	}
	if err := installPlugin(opts.Binary, filepath.Join(opts.HostRoot, "opt/cni/bin")); err != nil {
		return fmt.Errorf("installing the CNI plugin: %w", err)
	}
	fmt.Fprintf(opts.Out, "svclab-cni %s on %s: plugin installed\n", opts.Variant, opts.NodeName)
	written := ""
	for {
		if err := reconcile(ctx, client, nets, opts, &written); err != nil {
			fmt.Fprintf(opts.Out, "reconcile: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.Interval):
		}
	}
}

// familyNet is one family of the pod network: its cluster CIDR and its
// VXLAN device.
type familyNet struct {
	cluster netip.Prefix
	overlay Overlay
}

// is6 says whether the family is IPv6.
func (f familyNet) is6() bool { return f.cluster.Addr().Is6() }

// familyNetsOf reads --cluster-cidr (one CIDR, or one per family, comma
// separated) into the families the agent runs, in that order.
func familyNetsOf(variant, clusterCIDRs string) ([]familyNet, error) {
	var nets []familyNet
	seen := map[bool]bool{}
	for _, s := range strings.Split(clusterCIDRs, ",") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("--cluster-cidr %q: %w", clusterCIDRs, err)
		}
		if seen[p.Addr().Is6()] {
			return nil, fmt.Errorf("--cluster-cidr %q: want one CIDR per IP family", clusterCIDRs)
		}
		seen[p.Addr().Is6()] = true
		o, err := OverlayOf(variant)
		if p.Addr().Is6() {
			o, err = OverlayIPv6Of(variant)
		}
		if err != nil {
			return nil, err
		}
		nets = append(nets, familyNet{cluster: p.Masked(), overlay: o})
	}
	return nets, nil
}

// enableForwarding: nodes route pods' traffic (flannel's bridge plugin
// would turn this on per pod, Felix does it at start; proxy ARP answers
// only when on) — IPv4's always, as before, IPv6's too on a cluster with
// IPv6 pods (kind sets it already for ipv6 and dual clusters).
func enableForwarding(nets []familyNet) error {
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		return fmt.Errorf("sysctl net.ipv4.ip_forward=1: %w", err)
	}
	for _, f := range nets {
		if f.is6() {
			if err := os.WriteFile("/proc/sys/net/ipv6/conf/all/forwarding", []byte("1"), 0o644); err != nil {
				return fmt.Errorf("sysctl net.ipv6.conf.all.forwarding=1: %w", err)
			}
		}
	}
	return nil
}

func clientConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return rest.InClusterConfig()
}

// reconcile brings the node's config file and overlays in line with the
// Node objects.
func reconcile(ctx context.Context, client kubernetes.Interface, nets []familyNet, opts AgentOptions, written *string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := client.CoreV1().Nodes().List(cctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var podCIDRs []netip.Prefix
	var devices []string
	peerCount := 0
	for _, f := range nets {
		self, peers, err := nodesToPeers(list.Items, opts.NodeName, f.is6())
		if err != nil {
			return err
		}
		if err := programOverlay(f.overlay, self, peers); err != nil {
			return err
		}
		podCIDRs = append(podCIDRs, self.PodCIDR)
		devices = append(devices, f.overlay.Device)
		peerCount = len(peers)
	}
	conf, err := Conflist(opts.Variant, podCIDRs...)
	if err != nil {
		return err
	}
	if string(conf) != *written {
		for i, f := range nets {
			if err := applyMasq(ctx, opts.HostRoot, opts.Variant, f.cluster.String(), podCIDRs[i].String()); err != nil {
				return err
			}
		}
		if opts.Variant == CalicoProxyARP {
			if err := blackholeRoute(podCIDRs[0]); err != nil {
				return err
			}
		}
		path := filepath.Join(opts.HostRoot, ConfigPath)
		if err := writeAtomic(path, conf, 0o644); err != nil {
			return err
		}
		*written = string(conf)
		fmt.Fprintf(opts.Out, "wrote %s for podCIDR %s; %d peers over %s\n", ConfigPath, joinPrefixes(podCIDRs), peerCount, strings.Join(devices, " and "))
	}
	return nil
}

// programOverlay keeps one family's VXLAN device, and the route,
// neighbour and FDB entries of each peer over it.
func programOverlay(o Overlay, self Peer, peers []Peer) error {
	link, err := ensureVXLAN(o, self.Name, self.IP, self.PodCIDR)
	if err != nil {
		return err
	}
	for _, p := range peers {
		if err := programPeer(link, o, p); err != nil {
			return err
		}
	}
	return pruneRoutes(link, netlinkFamily(self.PodCIDR.Addr()), peers)
}

func joinPrefixes(ps []netip.Prefix) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ",")
}

// nodesToPeers finds this node and the others that have a podCIDR and an
// InternalIP of the family (IPv6 when is6).
func nodesToPeers(nodes []corev1.Node, self string, is6 bool) (Peer, []Peer, error) {
	var me *Peer
	var peers []Peer
	for _, n := range nodes {
		p, ok := peerOf(n, is6)
		if n.Name == self {
			if !ok {
				if is6 {
					return Peer{}, nil, fmt.Errorf("node %s has no IPv6 podCIDR or InternalIP yet", self)
				}
				return Peer{}, nil, fmt.Errorf("node %s has no podCIDR or InternalIP yet", self)
			}
			me = &p
			continue
		}
		if ok {
			peers = append(peers, p)
		}
	}
	if me == nil {
		return Peer{}, nil, fmt.Errorf("node %s not found", self)
	}
	sort.Slice(peers, func(i, j int) bool { return peers[i].Name < peers[j].Name })
	return *me, peers, nil
}

// peerOf is a node as a peer of one family: its podCIDR (spec.podCIDRs,
// or spec.podCIDR) and InternalIP of that family.
func peerOf(n corev1.Node, is6 bool) (Peer, bool) {
	p := Peer{Name: n.Name}
	cidrs := n.Spec.PodCIDRs
	if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
		cidrs = []string{n.Spec.PodCIDR}
	}
	for _, c := range cidrs {
		if cidr, err := netip.ParsePrefix(c); err == nil && cidr.Addr().Is6() == is6 && !cidr.Addr().Is4In6() {
			p.PodCIDR = cidr
			break
		}
	}
	if !p.PodCIDR.IsValid() {
		return p, false
	}
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is6() == is6 && !ip.Is4In6() {
			p.IP = ip
			return p, true
		}
	}
	return p, false
}

// pluginWrapper is /opt/cni/bin/svclab-cni: the CNI runtime runs plugins
// without arguments, svclab needs its subcommand.
const pluginWrapper = "#!/bin/sh\n# svclab's CNI plugin (installed by the svclab-cni DaemonSet)\nexec /opt/cni/bin/svclab cni plugin\n"

// installPlugin copies the svclab binary to dir/svclab and writes the
// svclab-cni wrapper next to it.
func installPlugin(binary, dir string) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(filepath.Join(dir, "svclab")); err != nil || !bytes.Equal(old, data) {
		if err := writeAtomic(filepath.Join(dir, "svclab"), data, 0o755); err != nil {
			return err
		}
	}
	return writeAtomic(filepath.Join(dir, PluginType), []byte(pluginWrapper), 0o755)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".svclab-tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
