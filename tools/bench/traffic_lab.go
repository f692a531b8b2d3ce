package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/labs/netns"
)

// trafficLab is a lab ready for the traffic benchmark: the client pod and
// the two ways to the one server.
type trafficLab struct {
	lab       *netns.Lab
	client    string         // the client pod's name
	clusterIP netip.AddrPort // the Service's cluster IP and port
	podIP     netip.AddrPort // the server pod's IP and port
}

// trafficLabPrefix starts the name of every lab the traffic benchmark
// builds (the data-plane benchmark's are dpbench-…).
const trafficLabPrefix = "trbench-"

// createTrafficLab builds a mode's lab (topologyYAML's one node) under a
// name of its own.
func createTrafficLab(ctx context.Context, dir string, m Mode, opts netns.Options) (*netns.Lab, error) {
	name := fmt.Sprintf("%s%04x", trafficLabPrefix, rand.IntN(1<<16))
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte(topologyYAML(name, m)), 0o644); err != nil {
		return nil, err
	}
	lab, _, err := netns.Create(ctx, file, labOptions(ctx, opts))
	return lab, err
}

// setUpTrafficLab applies the server and the client (and, for nftables,
// the mode through the kube-proxy ConfigMap, restarting the proxy as a
// user switches modes), then n generated Services whose endpoint is the
// server — the target is the last, late in the proxy's KUBE-SERVICES
// chain —, finds the pods, and lets the client reuse its TIME_WAIT ports
// (repetitions to the same target).
func setUpTrafficLab(ctx context.Context, lab *netns.Lab, dir string, m Mode, n int, opts netns.Options) (*trafficLab, error) {
	if err := applyTrafficPods(ctx, lab, dir, m, opts); err != nil {
		return nil, err
	}
	svcs, err := decodeServices(n)
	if err != nil {
		return nil, err
	}
	if err := lab.ApplyManifests(ctx, svcs, "generated Services", opts); err != nil {
		return nil, err
	}
	t := &trafficLab{lab: lab, clusterIP: addrPort(n - 1)}
	st, _, err := lab.Store.ReadObjects()
	if err != nil {
		return nil, err
	}
	for _, p := range st.Pods {
		switch p.Labels["app"] {
		case trafficClientApp:
			t.client = p.Name
		case trafficServerApp:
			ip, err := netip.ParseAddr(p.Status.PodIP)
			if err != nil {
				return nil, fmt.Errorf("lab %s: server pod %s: pod IP %q: %w", lab.Name(), p.Name, p.Status.PodIP, err)
			}
			t.podIP = netip.AddrPortFrom(ip, serverPort)
		}
	}
	if t.client == "" || !t.podIP.IsValid() {
		return nil, fmt.Errorf("lab %s: no %s or no %s pod after the apply", lab.Name(), trafficClientApp, trafficServerApp)
	}
	if err := t.inNamespace(t.client, reuseTimeWaitPorts); err != nil {
		return nil, err
	}
	return t, nil
}

// applyTrafficPods applies trafficPodsYAML, with the mode's ConfigMap for
// nftables (then restarts the proxy).
func applyTrafficPods(ctx context.Context, lab *netns.Lab, dir string, m Mode, opts netns.Options) error {
	manifest := trafficPodsYAML()
	if m.ProxyMode == "nftables" {
		cm, err := modeConfigMap(lab, m.ProxyMode)
		if err != nil {
			return err
		}
		manifest += "---\n" + cm
	}
	file := filepath.Join(dir, "pods.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		return err
	}
	if err := lab.Apply(ctx, file, opts); err != nil {
		return err
	}
	if m.ProxyMode == "nftables" {
		return lab.RestartProxies(ctx, []string{nodeName}, opts)
	}
	return nil
}

// reuseTimeWaitPorts sets net.ipv4.tcp_tw_reuse to 1 in the calling
// thread's namespace: a connection may take a local port whose last
// connection to the same target is in TIME_WAIT (for more than a second,
// with TCP timestamps). Every run leaves its N ports in TIME_WAIT for 60 s
// on the client, which closes first; without it, the next repetition to
// the same target would run out of its 28,232 ephemeral ports.
func reuseTimeWaitPorts() error {
	return os.WriteFile("/proc/sys/net/ipv4/tcp_tw_reuse", []byte("1\n"), 0o644)
}

// flushNodeConntrack empties the node's conntrack table before a run, so
// that every run starts from the same table (and 20,000 connections a run
// never fill it: their entries stay 120 s in TIME_WAIT).
func (t *trafficLab) flushNodeConntrack() error {
	return t.inNamespace(nodeName, func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		if err := h.ConntrackTableFlush(netlink.ConntrackTable); err != nil {
			return fmt.Errorf("flush the conntrack table of %s: %w", nodeName, err)
		}
		return nil
	})
}

// inNamespace runs fn on a thread in host's network namespace.
func (t *trafficLab) inNamespace(host string, fn func() error) error {
	name, err := t.lab.Namespace(host)
	if err != nil {
		return err
	}
	h, err := vnetns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("network namespace %s: %w", name, err)
	}
	defer h.Close()
	return nsthread.Do(name, h, fn)
}
