package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
)

// The two forms of kube-proxy's nftables rules, as `nft -j list table ip
// kube-proxy` prints them: testdata/nft/<form>.json is the listing of
// testdata/nft/<form>.nft (TestIntegrationNFTListing makes it again).
var nftForms = []string{"endpoint-chains", "numgen-map"}

func nftService(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func nftPods(ips ...string) []corev1.Pod {
	var pods []corev1.Pod
	for i, ip := range ips {
		pods = append(pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web-" + string(rune('a'+i))},
			Status:     corev1.PodStatus{PodIP: ip},
		})
	}
	return pods
}

func readNFTListing(t *testing.T, form string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "nft", form+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// checkNFTListing runs nftServiceProblem on a listing of either form:
// default/two has pods 10.244.1.5 and 10.244.2.6, default/three has
// 10.244.1.7, 10.244.2.8 and 10.244.3.9, all on port 8080.
func checkNFTListing(t *testing.T, form, table string) {
	t.Helper()
	two := nftPods("10.244.1.5", "10.244.2.6")
	three := nftPods("10.244.1.7", "10.244.2.8", "10.244.3.9")
	tests := []struct {
		name   string
		svc    string
		pods   []corev1.Pod
		port   int
		accept bool
		want   string // in the problem
	}{
		{"2 endpoints", "two", two, 8080, true, ""},
		{"3 endpoints", "three", three, 8080, true, ""},
		{"endpoints in another order", "three", []corev1.Pod{three[2], three[0], three[1]}, 8080, true, ""},
		{"one endpoint too many", "two", append(nftPods("10.244.3.3"), two...), 8080, false,
			"does not spread with numgen random mod 3 over the endpoints"},
		{"one endpoint too few", "three", three[:2], 8080, false,
			"does not spread with numgen random mod 2 over the endpoints"},
		{"a pod that is not an endpoint", "two", []corev1.Pod{two[0], nftPods("10.244.9.9")[0]}, 8080, false,
			"does not DNAT to pod web-a (10.244.9.9:8080)"},
		{"another service's pods", "two", three[:2], 8080, false, "does not DNAT to pod web-a (10.244.1.7:8080)"},
		{"wrong target port", "three", three, 80, false, "does not DNAT to pod web-a (10.244.1.7:80)"},
		{"no such service", "four", two, 8080, false, "no service chain for default/four/tcp/ in table ip kube-proxy"},
	}
	for _, tt := range tests {
		problem := nftServiceProblem(table, nftService(tt.svc), tt.pods, tt.port)
		switch {
		case tt.accept && problem != "":
			t.Errorf("%s, %s: %s", form, tt.name, problem)
		case !tt.accept && !strings.Contains(problem, tt.want):
			t.Errorf("%s, %s: problem %q, want it to say %q", form, tt.name, problem, tt.want)
		}
	}
}

func TestNFTServiceProblem(t *testing.T) {
	for _, form := range nftForms {
		checkNFTListing(t, form, readNFTListing(t, form))
	}
}

// TestNFTServiceProblemReadsTheRightMap checks that each form is read as
// itself: the DNAT map of the numgen-map form, the endpoint chains of the
// other, and that an endpoint chain the verdict map does not reach counts
// for nothing.
func TestNFTServiceProblemReadsTheRightMap(t *testing.T) {
	mapForm, err := parseNFT(readNFTListing(t, "numgen-map"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range mapForm.chains() {
		if strings.HasPrefix(c, "endpoint-") {
			t.Errorf("numgen-map form has an endpoint chain %s", c)
		}
	}
	chainForm := readNFTListing(t, "endpoint-chains")
	// Point the verdict map of default/two at default/three's endpoint
	// chains: default/two's own endpoint chains still exist, but are not
	// chosen.
	rerouted := strings.NewReplacer(
		`"goto": {"target": "endpoint-5MFKYRZ3-default/two/tcp/__10.244.1.5/8080"}`, `"goto": {"target": "endpoint-TYA4LKV6-default/three/tcp/__10.244.1.7/8080"}`,
	).Replace(chainForm)
	if rerouted == chainForm {
		t.Fatal("test bug: the verdict map element was not found in the listing")
	}
	problem := nftServiceProblem(rerouted, nftService("two"), nftPods("10.244.1.5", "10.244.2.6"), 8080)
	if !strings.Contains(problem, "does not DNAT to pod web-a (10.244.1.5:8080)") {
		t.Errorf("endpoint chain not reached by the verdict map: problem %q", problem)
	}
}

func TestNFTServiceProblemNotJSON(t *testing.T) {
	for _, table := range []string{"", "table ip kube-proxy {\n}\n", `{"nftables": [{"rule": {"expr": 7}}]}`} {
		problem := nftServiceProblem(table, nftService("two"), nftPods("10.244.1.5"), 8080)
		if !strings.Contains(problem, "not the JSON output of nft -j") {
			t.Errorf("table %q: problem %q, want it to say the input is not nft -j output", table, problem)
		}
	}
}

// TestIntegrationNFTListing loads testdata/nft/<form>.nft into a scratch
// network namespace with this host's nft, lists it with `nft -j`, and
// checks the live listing as the committed one. The namespace is removed
// at the end.
func TestIntegrationNFTListing(t *testing.T) {
	roottest.Require(t, "creates a network namespace and loads nftables rules into it")
	if err := hostprog.Check(hostprog.NFT); err != nil {
		t.Fatal(err) // make deps installs nftables
	}
	ns := roottest.Netns(t, "svclab-nft")
	for _, form := range nftForms {
		rules := filepath.Join("testdata", "nft", form+".nft")
		if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-f", rules).CombinedOutput(); err != nil {
			t.Fatalf("nft -f %s: %v: %s", rules, err, out)
		}
		out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-j", "list", "table", "ip", "kube-proxy").Output()
		if err != nil {
			t.Fatalf("nft -j list table ip kube-proxy: %v", err)
		}
		checkNFTListing(t, form+" (live)", string(out))
		if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "delete", "table", "ip", "kube-proxy").CombinedOutput(); err != nil {
			t.Fatalf("nft delete table ip kube-proxy: %v: %s", err, out)
		}
	}
}
