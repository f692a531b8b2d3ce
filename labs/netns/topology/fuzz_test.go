package topology_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/netns/network"
	"github.com/svclab/svclab/labs/netns/topology"
)

// maxIfName is IFNAMSIZ - 1, the longest interface name Linux accepts.
const maxIfName = 15

// FuzzParse decodes, validates and plans any document: it gives a lab or
// its problems, each a single-line *topology.Error naming the source,
// never a panic, and a lab Parse accepts always has a network plan
// (network.PlanLab, the pure planner: no kernel) whose names the kernel
// accepts, the same each time.
func FuzzParse(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "two-node.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	fuzzBase := string(data) // a valid two-node lab, the seed most mutations start from
	f.Add(fuzzBase)
	f.Add(strings.Replace(fuzzBase, "flannel-vxlan", "calico-proxyarp", 1))
	f.Add(strings.Replace(fuzzBase, "flannel-vxlan", "canal", 1))
	for _, family := range []string{"ipv6", "dual"} {
		for _, cni := range []string{"flannel-vxlan", "calico-proxyarp", "canal"} {
			f.Add(strings.Replace(fuzzBase, "cni: flannel-vxlan", "cni: "+cni+"\n  ipFamily: "+family, 1))
		}
	}
	f.Add(strings.NewReplacer( // dual, IPv6 primary, every value written
		"cni: flannel-vxlan", "cni: canal\n  ipFamily: dual",
		"podSubnet: 10.244.0.0/16", "podSubnet: fd00:10:244::/56,10.244.0.0/16",
		"serviceSubnet: 10.96.0.0/16", "serviceSubnet: fd00:10:96::/112,10.96.0.0/16",
		"ip: 192.168.16.73/20", `ip: "fd00:1::73/64,192.168.16.73/20"`,
		"podCIDR: 10.244.1.0/24", `podCIDR: "fd00:10:244:1::/64,10.244.1.0/24"`,
	).Replace(fuzzBase))
	f.Add(strings.Replace(fuzzBase, "podSubnet: 10.244.0.0/16", "ipFamily: dual\n  podSubnet: 10.244.0.0/16,fd00::/129,", 1))
	mistakes, err := os.ReadFile(filepath.Join("testdata", "several-mistakes.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(mistakes))
	f.Add("spec: {nodes: [{name: a}, {name: 7, ip: [1]}], proxy: true}")
	f.Add("- a\n")
	f.Add("kind: Lab\nstatus: {x: [1, {y: 2}]}\n")
	shipped, err := filepath.Glob("../../../clusters/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range shipped {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		lab, err := topology.Parse([]byte(doc), "f.yaml")
		if err != nil {
			checkProblems(t, doc, err)
			return
		}
		if lab == nil {
			t.Fatal("no lab and no error")
		}
		plan, err := network.PlanLab(lab)
		if err != nil {
			t.Fatalf("Parse accepted the lab but PlanLab refuses it: %v\n%s", err, doc)
		}
		checkPlan(t, plan)
		again, err := network.PlanLab(lab)
		if err != nil || again.Script() != plan.Script() {
			t.Fatalf("PlanLab is not deterministic (err %v)", err)
		}
	})
}

// checkProblems states what Parse's error is: one *topology.Error, or
// several joined (errors.Join), each one line naming f.yaml.
func checkProblems(t *testing.T, doc string, err error) {
	t.Helper()
	problems := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		problems = joined.Unwrap()
	}
	for _, p := range problems {
		var terr *topology.Error
		if !errors.As(p, &terr) || !strings.HasPrefix(p.Error(), "topology f.yaml: ") || strings.Contains(p.Error(), "\n") {
			t.Fatalf("Parse(%q): problem %q is not one line from *topology.Error naming f.yaml", doc, p)
		}
	}
}

// checkPlan states what the kernel will insist on: unique namespaces of a
// valid file name, interface names within IFNAMSIZ, no interface created
// twice in one namespace, and every step in a namespace the plan creates.
func checkPlan(t *testing.T, plan *network.Plan) {
	t.Helper()
	namespaces := map[string]bool{}
	links := map[string]bool{} // "ns/link"
	newLink := func(ns, name string) {
		if name == "" || len(name) > maxIfName || strings.ContainsAny(name, "/ \t\n:") {
			t.Errorf("interface name %q in %s is not one the kernel accepts", name, ns)
		}
		if links[ns+"/"+name] {
			t.Errorf("interface %s created twice in %s", name, ns)
		}
		links[ns+"/"+name] = true
	}
	for _, s := range plan.Steps {
		switch s := s.(type) {
		case network.AddNetns:
			if namespaces[s.Name] {
				t.Errorf("namespace %s created twice", s.Name)
			}
			if len(s.Name) > 255 || strings.ContainsAny(s.Name, "/\x00") || s.Name == "." || s.Name == ".." {
				t.Errorf("namespace name %q is not a file name", s.Name)
			}
			namespaces[s.Name] = true
		case network.AddVeth:
			newLink(s.NS, s.Name)
			newLink(s.PeerNS, s.PeerName)
		case network.AddBridge:
			newLink(s.NS, s.Name)
		case network.AddVxlan:
			newLink(s.NS, s.Name)
		}
		if !namespaces[s.Namespace()] {
			t.Errorf("step %q runs in namespace %s before the plan creates it", s.Command(), s.Namespace())
		}
	}
	if got := plan.Namespaces(); len(got) != len(namespaces) {
		t.Errorf("Plan.Namespaces() = %d names, the steps create %d", len(got), len(namespaces))
	}
}
