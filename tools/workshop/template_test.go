package workshop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/hostprog"
)

// fakeFacts are a fixed lab's facts: seed 004's addresses.
type fakeFacts struct{}

func (fakeFacts) ClusterIP(ns, name string) (string, error) {
	if ns == "default" && name == "httpserver" {
		return "10.254.112.35", nil
	}
	return "", fmt.Errorf("no Service %s/%s", ns, name)
}

func (fakeFacts) NodePort(ns, name, port string) (int, error) {
	if port == "http" || port == "3000" {
		return 30000, nil
	}
	return 0, fmt.Errorf("Service %s/%s has no port %q", ns, name, port)
}

func (fakeFacts) PodIP(pod string) (string, error) {
	if pod == "httpserver" {
		return "10.100.81.180", nil
	}
	return "", fmt.Errorf("no pod %s", pod)
}

func (fakeFacts) HostIP(host string) (string, error) {
	return map[string]string{"hosta": "192.168.16.73", "hostb": "192.168.16.139", "client": "192.168.55.230"}[host], nil
}

func (fakeFacts) VTEPIP(string) (string, error)      { return "10.100.40.0", nil }
func (fakeFacts) VXLANDevice(string) (string, error) { return "flannel.1", nil }
func (fakeFacts) VNI(string) (int, error)            { return 1, nil }
func (fakeFacts) VXLANPort(string) (int, error)      { return 8472, nil }
func (fakeFacts) CNI() string                        { return "canal" }

// TestExpandUpstreamVectors: the chain functions give upstream
// kube-proxy's names (pkg/proxy/iptables' known vectors).
func TestExpandUpstreamVectors(t *testing.T) {
	for text, want := range map[string]string{
		`{{ svcChain "default" "kubernetes" "https" "tcp" }}`: "KUBE-SVC-NPX46M4PTMTKRN6Y",
		`{{ extChain "default" "kubernetes" "https" "tcp" }}`: "KUBE-EXT-NPX46M4PTMTKRN6Y",
	} {
		got, err := Expand(text, fakeFacts{})
		if err != nil || got != want {
			t.Errorf("Expand(%s) = %q, %v; want %q", text, got, err, want)
		}
	}
}

// TestExpandGolden expands every template function against fixed facts
// (testdata/expand.golden), errors included.
func TestExpandGolden(t *testing.T) {
	var b strings.Builder
	for _, text := range []string{
		`no template at all: {braces} stay`,
		`{{ svcChain "default" "httpserver" "http" "tcp" }}`,
		`{{ extChain "default" "httpserver" "http" "tcp" }}`,
		`{{ fwChain "default" "httpserver" "http" "tcp" }}`,
		`{{ xlbChain "default" "httpserver" "http" "tcp" }}`,
		`{{ sepChain "default" "httpserver" "http" "tcp" "httpserver" 3000 }}`,
		`{{ clusterIP "default" "httpserver" }}:3000`,
		`{{ nodeIP "hosta" }}:{{ nodePort "default" "httpserver" "http" }}`,
		`{{ nodePort "default" "httpserver" 3000 }}`,
		`{{ podIP "httpserver" }} {{ hostIP "client" }} {{ vtepIP "hosta" }}`,
		`-d {{ re (clusterIP "default" "httpserver") }}/32`,
		`{{ clusterIP "default" "nosuch" }}`,
		`{{ sepChain "default" "httpserver" "http" "tcp" "nosuch" 3000 }}`,
		`{{ nodePort "default" "httpserver" "admin" }}`,
		`{{ svcChain "default" }}`,
		`{{ .Secret }}`,
		`{{ nosuch }}`,
		`{{ range $i := "x" }}`,
	} {
		got, err := Expand(text, fakeFacts{})
		if err != nil {
			got = "error: " + err.Error()
		}
		fmt.Fprintf(&b, "%s\n  → %s\n", text, got)
	}
	checkGolden(t, "expand.golden", b.String())
}

// TestExpandIsBounded: a template cannot expand without bound.
func TestExpandIsBounded(t *testing.T) {
	text := strings.Repeat(`{{ svcChain "a" "b" "c" "tcp" }}`, maxExpansion/25+1)
	if _, err := Expand(text, fakeFacts{}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a %d-byte expansion: got %v, want an error", maxExpansion+25, err)
	}
}

// TestHostProgramsAreDeclared: the programs a lesson may run in a lab host
// are exactly internal/hostprog's Workshop programs.
func TestHostProgramsAreDeclared(t *testing.T) {
	declared := map[string]bool{}
	for _, p := range hostprog.Needs(hostprog.Workshop) {
		declared[p] = true
	}
	for _, p := range HostPrograms {
		if !declared[p] {
			t.Errorf("workshop.HostPrograms has %s, which hostprog does not declare for Workshop", p)
		}
		delete(declared, p)
	}
	for p := range declared {
		t.Errorf("hostprog declares %s for Workshop, which workshop.HostPrograms lacks", p)
	}
}

// TestWithLab: --lab goes before a "--" (svclab exec HOST -- CMD); bench,
// which builds labs of its own, gets none.
func TestWithLab(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"apply -f web.yaml", "apply -f web.yaml --lab=l"},
		{"exec node1 -- ip route", "exec node1 --lab=l -- ip route"},
		{"bench dataplane --services 20", "bench dataplane --services 20"},
	} {
		if got := strings.Join(withLab(strings.Fields(c.in), "l"), " "); got != c.want {
			t.Errorf("withLab(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestFilterLines keeps the lines with one of the strings.
func TestFilterLines(t *testing.T) {
	out := "a KUBE-SVC x\nb KUBE-SEP y\nc other\n"
	if got := filterLines(out, []string{"KUBE-SVC", "KUBE-SEP"}); got != "a KUBE-SVC x\nb KUBE-SEP y" {
		t.Errorf("got %q", got)
	}
	if got := filterLines(out, nil); got != strings.TrimRight(out, "\n") {
		t.Errorf("no keep: got %q", got)
	}
}
