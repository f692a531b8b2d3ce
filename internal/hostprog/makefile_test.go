package hostprog

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// An aptList is one of the Makefile's Debian package lists of svclab's
// programs: it holds exactly the packages of the programs its uses need
// (the Essential ones aside), its deps target installs it, and each of its
// targets has that deps target among its prerequisites.
type aptList struct {
	name    string
	uses    []Use
	deps    string
	targets []string
}

var aptLists = []aptList{
	{"LAB_APT_PKGS", []Use{Lab, Proxy, Workshop}, "deps-lab", []string{"lab", "lab-nodeport", "lesson"}},
	{"TEST_APT_PKGS", []Use{Lab, Proxy, Workshop, VM, Test}, "deps", []string{"test", "test-repeat", "test-vm", "test-scenarios", "e2e-kind"}},
}

// makeOnlyLists are Makefile package lists of programs svclab never runs.
var makeOnlyLists = map[string]string{
	"LOAD_APT_PKGS": "make test-repeat LOAD=1's CPU hog",
}

// TestMakefileAptLists: each target installs what its command needs and
// nothing more (make lab-nodeport no emulator, no browser), and every
// package the Makefile installs for svclab comes from a declared program.
func TestMakefileAptLists(t *testing.T) {
	mk := readMakefile(t)
	for name := range mk.vars {
		if strings.HasSuffix(name, "_APT_PKGS") && !slices.ContainsFunc(aptLists, func(l aptList) bool { return l.name == name }) && makeOnlyLists[name] == "" {
			t.Errorf("Makefile %s: a package list this test does not know: add it to aptLists with the uses it serves", name)
		}
	}
	declared := Packages()
	for _, l := range aptLists {
		if _, ok := mk.vars[l.name]; !ok {
			t.Errorf("Makefile: no %s line", l.name)
			continue
		}
		got := strings.Fields(mk.expand(l.name))
		for _, p := range got {
			if !slices.Contains(declared, p) {
				t.Errorf("Makefile %s installs %s, which no program in hostprog.Programs comes from", l.name, p)
			} else if !slices.Contains(Packages(l.uses...), p) {
				t.Errorf("Makefile %s installs %s (programs %v), which none of %q needs", l.name, p, programsOf(p), l.uses)
			}
			if slices.Contains(Essential, p) {
				t.Errorf("Makefile %s installs %s, which every Debian system has (hostprog.Essential)", l.name, p)
			}
		}
		for _, p := range Packages(l.uses...) {
			if !slices.Contains(got, p) && !slices.Contains(Essential, p) {
				t.Errorf("Makefile %s lacks %s, which %q need (programs %v)", l.name, p, l.uses, programsOf(p))
			}
		}
		if !strings.Contains(mk.recipes[l.deps], "$("+l.name+")") {
			t.Errorf("Makefile target %s does not install $(%s)", l.deps, l.name)
		}
		for _, target := range l.targets {
			prereqs, ok := mk.prereqs[target]
			if !ok {
				t.Errorf("Makefile: no target %s", target)
			} else if !slices.Contains(prereqs, l.deps) {
				t.Errorf("Makefile target %s does not depend on %s (prerequisites %v)", target, l.deps, prereqs)
			}
		}
	}
}

// makefile is what the test reads of the Makefile: its simple variable
// assignments, and each rule's prerequisites and recipe text.
type makefile struct {
	vars    map[string]string
	prereqs map[string][]string
	recipes map[string]string
}

var (
	makeVarLine  = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*[:?]?=\s*(.*)$`)
	makeRuleLine = regexp.MustCompile(`^([a-z][a-z0-9-]*)\s*:([^=].*)?$`)
	makeVarRef   = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
)

func readMakefile(t *testing.T) makefile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := makefile{vars: map[string]string{}, prereqs: map[string][]string{}, recipes: map[string]string{}}
	rule := ""
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "\t") {
			mk.recipes[rule] += line + "\n"
			continue
		}
		rule = ""
		if m := makeVarLine.FindStringSubmatch(line); m != nil {
			mk.vars[m[1]] = m[2]
		} else if m := makeRuleLine.FindStringSubmatch(line); m != nil {
			rule = m[1]
			prereqs, _, _ := strings.Cut(m[2], "##")
			mk.prereqs[rule] = strings.Fields(prereqs)
		}
	}
	return mk
}

// expand is the variable's value with $(VAR) references replaced.
func (mk makefile) expand(name string) string {
	return makeVarRef.ReplaceAllStringFunc(mk.vars[name], func(ref string) string {
		return mk.expand(makeVarRef.FindStringSubmatch(ref)[1])
	})
}

func programsOf(pkg string) []string {
	var n []string
	for _, p := range Programs {
		if p.Package == pkg {
			n = append(n, p.Name)
		}
	}
	return n
}
