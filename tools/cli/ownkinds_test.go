package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/labs/kind"
)

// labRows are a lab that opens, an interrupted one and a broken one.
func labRows() []labRow {
	pods := 4
	return []labRow{
		{name: "single-node", opened: true, cni: "bridge", nodes: []string{"node1"}, pods: &pods, proxy: "iptables", state: "running",
			created: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)},
		{name: "half", state: "create interrupted (pid 42)"},
		{name: "gone", state: "broken (no state; svclab delete lab --name gone)"},
	}
}

// The table of get labs is byte for byte what it was before -o: the
// lessons and users read it.
func TestLabTableUnchanged(t *testing.T) {
	cmd := &cobra.Command{}
	var buf bytes.Buffer
	cmd.SetOut(&buf)
	if err := printLabTable(cmd, labRows(), ownOutput{}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"NAME         CNI     NODES  PODS  PROXY     STATUS\n" +
		"single-node  bridge  1      4     iptables  running\n" +
		"half         -       -      -     -         create interrupted (pid 42)\n" +
		"gone         -       -      -     -         broken (no state; svclab delete lab --name gone)\n"
	if buf.String() != want {
		t.Errorf("get labs:\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := printLabTable(cmd, labRows()[1:2], ownOutput{output: "wide", noHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if want := "half  -  -  -  -  create interrupted (pid 42)  <unknown>  -\n"; buf.String() != want {
		t.Errorf("get labs -o wide --no-headers:\n%q\nwant\n%q", buf.String(), want)
	}
}

// svclab's own kinds print as kubectl prints custom resources: a v1 List
// of svclab.dev/v1alpha1 objects, kind.group/name, and templates on them.
func TestOwnKindsPrintLikeKubectl(t *testing.T) {
	var labs []runtime.Object
	for _, r := range labRows() {
		labs = append(labs, r.object())
	}
	clusters := []runtime.Object{clusterObject(kind.Cluster{Name: "demo", Nodes: []string{"demo-control-plane"}, Proxy: "stock", Kubeconfig: "/run/demo.kubeconfig"})}
	leftovers := []runtime.Object{newOwnObject("Leftover", "node1", time.Time{}, leftoverStatus{ProxyMode: "ipvs", Scope: "other-modes", Items: []string{"iptables per-service chains (KUBE-SVC-/SEP-/EXT-/FW-/SVL-): 3"}})}
	for _, tc := range []struct {
		objs   []runtime.Object
		output string
		single bool
		want   string
	}{
		{labs, "name", false, "lab.svclab.dev/single-node\nlab.svclab.dev/half\nlab.svclab.dev/gone\n"},
		{labs, "jsonpath={.items[*].status.state}", false, "running create interrupted (pid 42) broken (no state; svclab delete lab --name gone)"},
		{labs, "custom-columns=NAME:.metadata.name,PODS:.status.pods,NODES:.status.nodes[*]", false, "" +
			"NAME          PODS     NODES\n" +
			"single-node   4        node1\n" +
			"half          <none>   <none>\n" +
			"gone          <none>   <none>\n"},
		{labs[:1], "yaml", true, "" +
			"apiVersion: svclab.dev/v1alpha1\n" +
			"kind: Lab\n" +
			"metadata:\n" +
			"  creationTimestamp: \"2026-11-24T12:00:00Z\"\n" +
			"  name: single-node\n" +
			"status:\n" +
			"  cni: bridge\n" +
			"  nodes:\n" +
			"  - node1\n" +
			"  pods: 4\n" +
			"  proxy: iptables\n" +
			"  state: running\n"},
		{clusters, "json", false, `{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "svclab.dev/v1alpha1",
            "kind": "Cluster",
            "metadata": {
                "name": "demo"
            },
            "status": {
                "kubeconfig": "/run/demo.kubeconfig",
                "nodes": [
                    "demo-control-plane"
                ],
                "proxy": "stock"
            }
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
`},
		{leftovers, "jsonpath={range .items[*]}{.metadata.name}: {.status.items[0]}{end}", false, "node1: iptables per-service chains (KUBE-SVC-/SEP-/EXT-/FW-/SVL-): 3"},
	} {
		var buf bytes.Buffer
		if err := (ownOutput{output: tc.output}).print(&buf, tc.objs, tc.single); err != nil {
			t.Errorf("-o %s: %v", tc.output, err)
			continue
		}
		if buf.String() != tc.want {
			t.Errorf("-o %s:\n%s\nwant\n%s", tc.output, buf.String(), tc.want)
		}
	}
}

// pickNames keeps the names asked for, in their order, and says which
// are missing as kubectl does.
func TestPickNames(t *testing.T) {
	picked, err := pickNames([]string{"a", "b", "c"}, []string{"c", "x", "a", "y"}, "labs")
	if len(picked) != 2 || picked[0] != "c" || picked[1] != "a" {
		t.Errorf("picked %v, want [c a]", picked)
	}
	if err == nil || err.Error() != `labs "x" not found; labs "y" not found` {
		t.Errorf("not found: %v", err)
	}
	if all, err := pickNames([]string{"a"}, nil, "labs"); len(all) != 1 || err != nil {
		t.Errorf("no names: %v, %v", all, err)
	}
}
