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
	ClusterCIDR string    // the pod network, for the masquerade rules
	Kubeconfig  string    // "" = in-cluster config
	HostRoot    string    // where the node's / is mounted (default /host)
	Binary      string    // the svclab binary to install (default: this executable)
	Out         io.Writer // log
	Interval    time.Duration
}

// RunAgent installs the plugin and the node's CNI config, then keeps the
// overlay in step with the Node objects until ctx is done.
func RunAgent(ctx context.Context, opts AgentOptions) error {
	o, err := OverlayOf(opts.Variant)
	if err != nil {
		return err
	}
	if opts.NodeName == "" {
		return fmt.Errorf("NODE_NAME is not set (the DaemonSet passes spec.nodeName)")
	}
	if _, err := netip.ParsePrefix(opts.ClusterCIDR); err != nil {
		return fmt.Errorf("--cluster-cidr %q: %w", opts.ClusterCIDR, err)
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
	// Nodes route pods' traffic (flannel's bridge plugin would turn this on
	// per pod, Felix does it at start; proxy ARP answers only when on).
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		return fmt.Errorf("sysctl net.ipv4.ip_forward=1: %w", err)
	}
	if err := installPlugin(opts.Binary, filepath.Join(opts.HostRoot, "opt/cni/bin")); err != nil {
		return fmt.Errorf("installing the CNI plugin: %w", err)
	}
	fmt.Fprintf(opts.Out, "svclab-cni %s on %s: plugin installed\n", opts.Variant, opts.NodeName)
	written := ""
	for {
		if err := reconcile(ctx, client, o, opts, &written); err != nil {
			fmt.Fprintf(opts.Out, "reconcile: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.Interval):
		}
	}
}

func clientConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return rest.InClusterConfig()
}

// reconcile brings the node's config file and overlay in line with the
// Node objects.
func reconcile(ctx context.Context, client kubernetes.Interface, o Overlay, opts AgentOptions, written *string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := client.CoreV1().Nodes().List(cctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	self, peers, err := nodesToPeers(list.Items, opts.NodeName)
	if err != nil {
		return err
	}
	link, err := ensureVXLAN(o, self.Name, self.IP, self.PodCIDR)
	if err != nil {
		return err
	}
	for _, p := range peers {
		if err := programPeer(link, o, p); err != nil {
			return err
		}
	}
	if err := pruneRoutes(link, peers); err != nil {
		return err
	}
	conf, err := Conflist(opts.Variant, self.PodCIDR)
	if err != nil {
		return err
	}
	if string(conf) != *written {
		if err := applyMasq(ctx, opts.HostRoot, opts.Variant, opts.ClusterCIDR, self.PodCIDR.String()); err != nil {
			return err
		}
		if opts.Variant == CalicoProxyARP {
			if err := blackholeRoute(self.PodCIDR); err != nil {
				return err
			}
		}
		path := filepath.Join(opts.HostRoot, ConfigPath)
		if err := writeAtomic(path, conf, 0o644); err != nil {
			return err
		}
		*written = string(conf)
		fmt.Fprintf(opts.Out, "wrote %s for podCIDR %s; %d peers over %s\n", ConfigPath, self.PodCIDR, len(peers), o.Device)
	}
	return nil
}

// nodesToPeers finds this node and the others that have a podCIDR and an
// InternalIP.
func nodesToPeers(nodes []corev1.Node, self string) (Peer, []Peer, error) {
	var me *Peer
	var peers []Peer
	for _, n := range nodes {
		p, ok := peerOf(n)
		if n.Name == self {
			if !ok {
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

func peerOf(n corev1.Node) (Peer, bool) {
	p := Peer{Name: n.Name}
	cidr, err := netip.ParsePrefix(n.Spec.PodCIDR)
	if err != nil || !cidr.Addr().Is4() {
		return p, false
	}
	p.PodCIDR = cidr
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
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
