package tour

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/svclab/svclab/labs/traffic"
)

// SingleNode is the foundation tour (seeds 000, 001, 003): seed 001's nginx
// Service over three pods on one node, 3000 connections from an outside
// client, and the iptables rules that spread them — the 1/3, 1/2, 1 ladder —
// with their counters.
func SingleNode(ctx context.Context, opts Options) error {
	return run(ctx, opts, filepath.Join("clusters", "single-node.yaml"), func(g *guide) error {
		root, _ := checkoutRoot(opts.Root)
		g.section("Deploy seed 001's nginx: a Deployment of 3 pods and a NodePort Service")
		if err := g.lab.Apply(ctx, filepath.Join(root, "clusters", "workloads", "nginx.yaml"), g.labOpts(g.out)); err != nil {
			return err
		}
		objs, _, err := g.lab.Store.ReadObjects()
		if err != nil {
			return err
		}
		svc := objs.Service("default", "nginx")
		vip := svc.Spec.ClusterIP
		node := g.lab.Topology.Spec.Nodes[0].Name

		g.section("What kube-proxy wrote: iptables-save | grep nginx")
		g.say("Every Service port gets a KUBE-SVC chain named by a hash of \"default/nginx\" + \"tcp\";")
		g.say("every endpoint a KUBE-SEP chain that DNATs to the pod.")
		g.say("The node port rule jumps to KUBE-EXT-… (Kubernetes 1.24+; the article jumps straight to KUBE-SVC):")
		g.say("the Service port's chain for traffic from outside, which marks it for masquerade and jumps to KUBE-SVC.")
		if _, err := g.show(node, []string{"nginx"}, "iptables-save", "-t", "nat"); err != nil {
			return err
		}

		g.section(fmt.Sprintf("3000 new connections from the client (outside the cluster) to %s:80", vip))
		res, err := g.lab.Traffic("client", traffic.Options{Target: vip + ":80", Connections: 3000}, g.labOpts(nil))
		if err != nil {
			return err
		}
		if err := res.Report().WriteTable(indent(g.out)); err != nil {
			return err
		}

		g.section("The ladder at work: the KUBE-SVC chain's counters")
		// nginx's chain (the lab's kube-dns Service has KUBE-SVC chains too).
		chain := ""
		if cmd, err := g.lab.Command(node, "iptables-save", "-t", "nat"); err == nil {
			save, _ := cmd.Output()
			for _, line := range strings.Split(string(save), "\n") {
				if i := strings.Index(line, "-A KUBE-SVC-"); i >= 0 && strings.Contains(line, "default/nginx") {
					chain = strings.Fields(line[i:])[1]
					break
				}
			}
		}
		if chain != "" {
			if _, err := g.show(node, []string{"-A " + chain}, "iptables-save", "-t", "nat", "-c"); err != nil {
				return err
			}
			if _, err := g.show(node, nil, "iptables", "-t", "nat", "-vnL", chain); err != nil {
				return err
			}
		}
		g.hop("the first rule matches with probability 1/3 (0.33333333349 as iptables prints it),")
		g.hop("the second takes 1/2 of what is left, the last takes the rest: each pod gets 1/3.")
		g.hop("the first rule of the chain marked the connections from outside 10.244.0.0/16 for MASQUERADE.")

		g.section("One conntrack entry per connection: original destination the VIP, reply from a pod")
		if _, err := g.show(node, nil, "sh", "-c", "conntrack -L -d "+vip+" 2>/dev/null | head -3; echo \"... $(conntrack -L -d "+vip+" 2>/dev/null | wc -l) entries\""); err != nil {
			return err
		}
		return nil
	})
}

// indent prefixes every line written to w with the guide's indentation.
type indentWriter struct {
	w interface{ Write([]byte) (int, error) }
}

func indent(w interface{ Write([]byte) (int, error) }) indentWriter { return indentWriter{w} }

func (iw indentWriter) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := iw.w.Write([]byte("   " + l)); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
