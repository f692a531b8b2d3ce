package network

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/netns/topology"
)

// collidingYAML is singleYAML with the client named CLIENT.
const collidingYAML = `apiVersion: svclab.dev/v1alpha1
kind: Lab
metadata: {name: NAME}
spec:
  cni: CNI
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/16
  nodes:
  - {name: node1, ip: 192.168.16.73/20, podCIDR: 10.244.1.0/24}
  clients:
  - {name: CLIENT, ip: 192.168.55.230/24}
`

// TestIntegrationNamespacesOfPrefixLabsApart is the collision of issue
// #25, finding 10, as a user of one lab meets it: lab X has a pod "b-c",
// lab X-b a client "c" — both were svclab-X-b-c, so whichever came second
// failed to build ("already exists"), and deleting X removed X-b's
// untagged leftovers. Both labs build, each host has a namespace of its own
// tagged for its lab, and destroying X leaves every namespace of X-b —
// tagged or left untagged by a crash — where it was.
func TestIntegrationNamespacesOfPrefixLabsApart(t *testing.T) {
	roottest.Require(t, "creates network namespaces")
	short := uniqueLabName(t)
	long := short + "-b"
	shortLab := newLab(t, strings.Replace(collidingYAML, "CLIENT", "client", 1), short, topology.CNIFlannelVXLAN)
	longLab := newLab(t, strings.Replace(collidingYAML, "CLIENT", "c", 1), long, topology.CNIFlannelVXLAN)

	buildLab(t, shortLab)
	if _, err := AttachPod(shortLab, "node1", PodNet{Name: "b-c", IP: netip.MustParseAddr("10.244.1.2")}); err != nil {
		t.Fatalf("lab %s: attach pod b-c: %v", short, err)
	}
	buildLab(t, longLab)
	// A namespace of lab X-b left untagged, as a crash half way leaves one.
	stray := NamespaceName(long, "b-d")
	if err := createNamedNetns(stray); err != nil {
		t.Fatal(err)
	}

	pod, client := NamespaceName(short, "b-c"), NamespaceName(long, "c")
	if pod == client {
		t.Fatalf("lab %s's pod b-c and lab %s's client c share the namespace %s", short, long, pod)
	}
	for ns, want := range map[string]tag{pod: {Lab: short, Role: "pod", Node: "node1"}, client: {Lab: long, Role: "client"}} {
		if got, ok := readTag(ns); !ok || got != want {
			t.Errorf("namespace %s: tag %+v (%v), want %+v", ns, got, ok, want)
		}
	}
	labs, err := List()
	if err != nil || !slices.Contains(labs, short) || !slices.Contains(labs, long) {
		t.Errorf("List() = %v, %v; want %s and %s", labs, err, short, long)
	}
	before, err := Namespaces(long)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{client, NamespaceName(long, "node1"), RouterNamespace(long), stray}
	slices.Sort(want)
	if !slices.Equal(before, want) {
		t.Errorf("lab %s's namespaces: %v, want %v", long, before, want)
	}
	if ns, _ := Namespaces(short); slices.ContainsFunc(ns, func(n string) bool { return slices.Contains(want, n) }) {
		t.Errorf("lab %s lists lab %s's namespaces: %v", short, long, ns)
	}

	if err := Destroy(short); err != nil {
		t.Fatal(err)
	}
	if left, _ := Namespaces(short); len(left) > 0 {
		t.Errorf("lab %s still has %v", short, left)
	}
	for _, ns := range want {
		if !namespaceExists(ns) {
			t.Errorf("destroying lab %s removed lab %s's namespace %s", short, long, ns)
		}
	}
	if got, ok := readTag(client); !ok || got.Lab != long {
		t.Errorf("lab %s's client after destroying %s: tag %+v (%v)", long, short, got, ok)
	}
	if err := Destroy(long); err != nil {
		t.Fatal(err)
	}
	if namespaceExists(stray) {
		t.Errorf("lab %s's untagged %s survived destroying its lab", long, stray)
	}
}
