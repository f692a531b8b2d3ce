package labs

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/svclab/svclab/"

// importRules are the house's walls (labs/README.md, "Layout"): a package
// matching from may not import (outside its tests) a package matching any
// of not, unless it also matches one of but. Patterns are module-relative;
// "x/..." is x and everything below it.
var importRules = []struct {
	from, why string
	not, but  []string
}{
	{"clusters", "the built-in files (lab files, kind configs, workloads, lessons) are data: they import nothing of svclab", []string{"internal/...", "proxy/...", "labs/...", "scenarios/...", "tools/..."}, nil},
	{"internal/...", "internal/ is the leaf floor: helpers every floor may use", []string{"proxy/...", "labs/...", "scenarios/...", "tools/..."}, nil},
	{"proxy/...", "the proxy is the bottom floor", []string{"labs/...", "scenarios/...", "tools/..."}, nil},
	{"labs/...", "labs sit under the scenarios and the tools", []string{"scenarios/...", "tools/..."}, nil},
	{"scenarios/...", "scenarios sit under the tools", []string{"tools/..."}, nil},
	{"labs/podnet", "the pod networks' shared facts are pure: no backend, no agent", []string{"labs/..."}, []string{"labs/podnet"}},
	{"labs/agents/...", "what runs in a node or pod serves either backend", []string{"labs/netns/...", "labs/kind/..."}, nil},
	{"labs/kind/...", "the kind backend is a sibling of the netns backend, not a tenant", []string{"labs/netns/..."}, nil},
	{"labs/netns/...", "the netns backend is a sibling of the kind backend", []string{"labs/kind/..."}, nil},
	{"scenarios/kit/kube", "specs on real clusters use the agents, not the netns backend", []string{"labs/netns/...", "scenarios/kit/netnslab"}, nil},
	{"scenarios/kit", "the kit's interfaces are backend-neutral (the netns lab is kit/netnslab)", []string{"labs/netns/...", "labs/kind/..."}, nil},
	{"tools/...", "tools see the kind backend through its facade and its two in-node entry points", []string{"labs/kind/..."}, []string{"labs/kind", "labs/kind/cni", "labs/kind/loadbalancer"}},
	{"tools/...", "the svclab binary runs the suite as its own binary: it links no spec, kit or cluster library of the suite, only its flags and its RBAC table", []string{"scenarios/..."}, []string{"scenarios/conformance/cmdline", "scenarios/kit/kube/access"}},
	{"scenarios/kit/kube/access", "the RBAC table is plain data the CLI prints", []string{"scenarios/...", "labs/..."}, nil},
}

func matches(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

func matchesAny(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if matches(p, pkg) {
			return true
		}
	}
	return false
}

// TestImportsPointDown checks every package's own imports (not its tests')
// against importRules, and that every rule still applies to a package (a
// rule about a moved package fails instead of passing for nothing).
func TestImportsPointDown(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: `go` is not on PATH, so the packages' imports cannot be listed")
	}
	cmd := exec.Command(goBin, "list", "-json=ImportPath,Imports", module+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json %s...: %v", module, err)
	}
	used := make([]bool, len(importRules))
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		for i, r := range importRules {
			if !matches(r.from, from) {
				continue
			}
			used[i] = true
			for _, imp := range p.Imports {
				to, ok := strings.CutPrefix(imp, module)
				if ok && matchesAny(r.not, to) && !matchesAny(r.but, to) {
					t.Errorf("%s imports %s: %s (rule %q)", from, to, r.why, r.from)
				}
			}
		}
	}
	for i, r := range importRules {
		if !used[i] {
			t.Errorf("rule %q matches no package any more: fix or drop it", r.from)
		}
	}
}
