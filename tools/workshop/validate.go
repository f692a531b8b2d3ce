package workshop

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/labs/netns/topology"
)

// Bounds of a lesson.
const (
	maxSteps        = 100
	maxExercises    = 50
	maxActions      = 20 // per step, solution
	maxChecks       = 20 // per exercise
	maxListItems    = 50 // argv, expectations, hints, keep
	maxTrafficCount = 20000
	maxClientIPs    = 100
	maxMinutes      = 600
)

// SvclabCommands are the svclab subcommands a lesson may run (with --lab
// added): the ones that read or change one lab's workload, and bench. A
// lesson never creates or deletes labs itself (workshop start and reset
// do); bench builds one-node labs of its own and deletes them before it
// returns, and is run without --lab (see LabFreeCommands).
var SvclabCommands = []string{"apply", "bench", "delete", "describe", "exec", "get", "graph", "leftovers", "logs", "traffic"}

// LabFreeCommands are the SvclabCommands that do not act on the lesson's
// lab, and get no --lab.
var LabFreeCommands = []string{"bench"}

// HostPrograms are the programs a lesson may run in a lab host: the ones
// internal/hostprog declares for the tours and lessons.
var HostPrograms = []string{"bridge", "cat", "conntrack", "getent", "ip", "ip6tables-save", "ipset", "iptables", "iptables-save", "ipvsadm", "nft", "sh"}

var seedPattern = regexp.MustCompile(`^[0-9]{3}$`)

// validate checks what a lesson file says, field by field; the first
// problem is the error.
func (l *Lesson) validate(src string) error {
	if l.APIVersion != APIVersion {
		return fieldErr(src, "apiVersion", l.APIVersion, "want %s", APIVersion)
	}
	if l.Kind != Kind {
		return fieldErr(src, "kind", l.Kind, "want %s", Kind)
	}
	if err := checkLabel(src, "metadata.name", l.Metadata.Name); err != nil {
		return err
	}
	if len(l.Metadata.Name) > topology.MaxLabNameLen {
		return fieldErr(src, "metadata.name", l.Metadata.Name, "at most %d characters: the lesson's lab is named after it", topology.MaxLabNameLen)
	}
	s := l.Spec
	if strings.TrimSpace(s.Title) == "" {
		return fieldErr(src, "spec.title", "", "required")
	}
	if s.Seed != "" && !seedPattern.MatchString(s.Seed) {
		return fieldErr(src, "spec.seed", s.Seed, "want the article's three-digit number, e.g. \"004\"")
	}
	if err := checkLabPath(src, s.Lab); err != nil {
		return err
	}
	if s.CNI != "" && !slices.Contains(topology.CNIs(), topology.CNI(s.CNI)) {
		return fieldErr(src, "spec.cni", s.CNI, "want one of %v", topology.CNIs())
	}
	for k, c := range s.CNIs {
		if !slices.Contains(topology.CNIs(), topology.CNI(c)) {
			return fieldErr(src, fmt.Sprintf("spec.cnis[%d]", k), c, "want one of %v", topology.CNIs())
		}
		if slices.Contains(s.CNIs[:k], c) {
			return fieldErr(src, fmt.Sprintf("spec.cnis[%d]", k), c, "named twice")
		}
	}
	if len(s.CNIs) > 0 && !slices.Contains(s.CNIs, s.CNI) {
		return fieldErr(src, "spec.cni", s.CNI, "want one of spec.cnis %v", s.CNIs)
	}
	if s.Minutes < 0 || s.Minutes > maxMinutes {
		return fieldErr(src, "spec.minutes", fmt.Sprint(s.Minutes), "want 0..%d", maxMinutes)
	}
	if len(s.Steps) == 0 || len(s.Steps) > maxSteps {
		return fieldErr(src, "spec.steps", "", "want 1..%d steps, got %d", maxSteps, len(s.Steps))
	}
	seen := map[string]string{}
	for i, st := range s.Steps {
		if err := st.validate(src, fmt.Sprintf("spec.steps[%d]", i), seen); err != nil {
			return err
		}
	}
	if len(s.Exercises) > maxExercises {
		return fieldErr(src, "spec.exercises", "", "at most %d exercises, got %d", maxExercises, len(s.Exercises))
	}
	seen = map[string]string{}
	for i, ex := range s.Exercises {
		if err := ex.validate(src, fmt.Sprintf("spec.exercises[%d]", i), seen); err != nil {
			return err
		}
	}
	return nil
}

// checkLabel requires a DNS-1123 label.
func checkLabel(src, field, name string) error {
	if name == "" {
		return fieldErr(src, field, "", "required")
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fieldErr(src, field, name, "%s", errs[0])
	}
	return nil
}

// checkUnique records name at field in seen and refuses a second one.
func checkUnique(src, field, name string, seen map[string]string) error {
	if first, dup := seen[name]; dup {
		return fieldErr(src, field, name, "the name of %s already", first)
	}
	seen[name] = strings.TrimSuffix(field, ".name")
	return nil
}

// checkLabPath requires a relative, slash-separated path to a .yaml file;
// Load checks it stays in clusters/.
func checkLabPath(src, p string) error {
	switch {
	case p == "":
		return fieldErr(src, "spec.lab", "", "required: the lab file, relative to the lesson's folder")
	case path.IsAbs(p) || strings.Contains(p, `\`):
		return fieldErr(src, "spec.lab", p, "want a path relative to the lesson's folder")
	case !strings.HasSuffix(p, ".yaml"):
		return fieldErr(src, "spec.lab", p, "want a lab file (.yaml)")
	}
	return nil
}

func (st Step) validate(src, field string, seen map[string]string) error {
	if err := checkLabel(src, field+".name", st.Name); err != nil {
		return err
	}
	if err := checkUnique(src, field+".name", st.Name, seen); err != nil {
		return err
	}
	if strings.TrimSpace(st.Explain) == "" {
		return fieldErr(src, field+".explain", "", "required: what the step shows, in English")
	}
	if err := checkRequires(src, field+".requires", st.Requires); err != nil {
		return err
	}
	if len(st.Run) > maxActions {
		return fieldErr(src, field+".run", "", "at most %d actions", maxActions)
	}
	for i, a := range st.Run {
		if err := a.validate(src, fmt.Sprintf("%s.run[%d]", field, i)); err != nil {
			return err
		}
	}
	if len(st.Expect) > maxListItems {
		return fieldErr(src, field+".expect", "", "at most %d expectations", maxListItems)
	}
	if len(st.Expect) > 0 && len(st.Run) == 0 {
		return fieldErr(src, field+".expect", "", "a step that runs nothing has no output to expect things of")
	}
	for i, e := range st.Expect {
		f := fmt.Sprintf("%s.expect[%d]", field, i)
		switch {
		case (e.Output == "") == (e.Absent == ""):
			return fieldErr(src, f, "", "want exactly one of output, absent")
		case e.Output != "":
			if err := checkRegexp(src, f+".output", e.Output); err != nil {
				return err
			}
		default:
			if err := checkRegexp(src, f+".absent", e.Absent); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a Action) validate(src, field string) error {
	switch {
	case len(a.Svclab) > 0 && (a.Host != "" || len(a.Command) > 0):
		return fieldErr(src, field, "", "want either svclab or host with command, not both")
	case len(a.Svclab) > 0:
		return checkSvclab(src, field+".svclab", a.Svclab)
	case a.Host == "":
		return fieldErr(src, field, "", "want svclab: [SUBCOMMAND, ARGS…] or host: HOST with command: [PROGRAM, ARGS…]")
	}
	if err := checkTemplate(src, field+".host", a.Host); err != nil {
		return err
	}
	if err := checkHostCommand(src, field+".command", a.Command); err != nil {
		return err
	}
	if len(a.Keep) > maxListItems {
		return fieldErr(src, field+".keep", "", "at most %d strings", maxListItems)
	}
	return checkTemplates(src, field+".keep", a.Keep)
}

// checkSvclab checks an svclab argv: a known subcommand, not `delete lab`.
func checkSvclab(src, field string, argv []string) error {
	if len(argv) > maxListItems {
		return fieldErr(src, field, "", "at most %d arguments", maxListItems)
	}
	if !slices.Contains(SvclabCommands, argv[0]) {
		return fieldErr(src, field+"[0]", argv[0], "want one of %v", SvclabCommands)
	}
	if argv[0] == "delete" && len(argv) > 1 && (argv[1] == "lab" || argv[1] == "labs") {
		return fieldErr(src, field+"[1]", argv[1], "a lesson does not delete labs (workshop reset does)")
	}
	for i, a := range argv {
		if strings.HasPrefix(a, "--lab") {
			return fieldErr(src, fmt.Sprintf("%s[%d]", field, i), a, "the workshop adds --lab itself")
		}
		file, isFile := "", false
		switch {
		case (a == "-f" || a == "--filename") && i+1 < len(argv):
			file, isFile = argv[i+1], true
		case strings.HasPrefix(a, "-f="), strings.HasPrefix(a, "--filename="):
			_, file, _ = strings.Cut(a, "=")
			isFile = true
		}
		if isFile && !insideLesson(file) {
			return fieldErr(src, fmt.Sprintf("%s[%d]", field, i), file, "a manifest of the lesson: a path inside the lesson's folder")
		}
	}
	return checkTemplates(src, field, argv)
}

// checkHostCommand checks a host argv: its program is one of HostPrograms.
func checkHostCommand(src, field string, argv []string) error {
	if len(argv) == 0 {
		return fieldErr(src, field, "", "required: [PROGRAM, ARGS…]")
	}
	if len(argv) > maxListItems {
		return fieldErr(src, field, "", "at most %d arguments", maxListItems)
	}
	if !slices.Contains(HostPrograms, argv[0]) {
		return fieldErr(src, field+"[0]", argv[0], "want one of %v", HostPrograms)
	}
	return checkTemplates(src, field, argv)
}

// insideLesson reports whether p is a relative path that stays inside the
// lesson's folder.
func insideLesson(p string) bool {
	c := path.Clean(p)
	return p != "" && !path.IsAbs(c) && c != "." && c != ".." && !strings.HasPrefix(c, "../") && !strings.Contains(p, `\`)
}

func (ex Exercise) validate(src, field string, seen map[string]string) error {
	if err := checkLabel(src, field+".name", ex.Name); err != nil {
		return err
	}
	if err := checkUnique(src, field+".name", ex.Name, seen); err != nil {
		return err
	}
	if strings.TrimSpace(ex.Task) == "" {
		return fieldErr(src, field+".task", "", "required: what the student is to do")
	}
	if err := checkRequires(src, field+".requires", ex.Requires); err != nil {
		return err
	}
	if len(ex.Hints) > maxListItems {
		return fieldErr(src, field+".hints", "", "at most %d hints", maxListItems)
	}
	if len(ex.Check) == 0 || len(ex.Check) > maxChecks {
		return fieldErr(src, field+".check", "", "want 1..%d items", maxChecks)
	}
	for i, c := range ex.Check {
		if err := c.validate(src, fmt.Sprintf("%s.check[%d]", field, i)); err != nil {
			return err
		}
	}
	if len(ex.Solution) == 0 || len(ex.Solution) > maxActions {
		return fieldErr(src, field+".solution", "", "want 1..%d actions: the reference solution the lesson ships", maxActions)
	}
	for i, a := range ex.Solution {
		if err := a.validate(src, fmt.Sprintf("%s.solution[%d]", field, i)); err != nil {
			return err
		}
	}
	return nil
}

func (c Check) validate(src, field string) error {
	kinds := 0
	if len(c.Svclab) > 0 || c.Host != "" || len(c.Command) > 0 {
		kinds++
	}
	if c.Traffic != nil {
		kinds++
	}
	if c.ClientIP != nil {
		kinds++
	}
	if kinds != 1 {
		return fieldErr(src, field, "", "want exactly one of: a command (svclab, or host with command) with expect/expectNot, traffic, clientIP")
	}
	switch {
	case c.Traffic != nil:
		return c.Traffic.validate(src, field+".traffic")
	case c.ClientIP != nil:
		return c.ClientIP.validate(src, field+".clientIP")
	}
	if err := (Action{Svclab: c.Svclab, Host: c.Host, Command: c.Command, Keep: c.Keep}).validate(src, field); err != nil {
		return err
	}
	if len(c.Expect)+len(c.ExpectNot) == 0 {
		return fieldErr(src, field, "", "a command check needs expect or expectNot")
	}
	if len(c.Expect) > maxListItems || len(c.ExpectNot) > maxListItems {
		return fieldErr(src, field, "", "at most %d expectations", maxListItems)
	}
	for i, e := range c.Expect {
		if err := checkRegexp(src, fmt.Sprintf("%s.expect[%d]", field, i), e); err != nil {
			return err
		}
	}
	for i, e := range c.ExpectNot {
		if err := checkRegexp(src, fmt.Sprintf("%s.expectNot[%d]", field, i), e); err != nil {
			return err
		}
	}
	return nil
}

func (t TrafficCheck) validate(src, field string) error {
	if t.From == "" || t.To == "" {
		return fieldErr(src, field, "", "want from (a lab host) and to (IP:PORT)")
	}
	if err := checkTemplates(src, field, []string{t.From, t.To}); err != nil {
		return err
	}
	if t.Count < 1 || t.Count > maxTrafficCount {
		return fieldErr(src, field+".count", fmt.Sprint(t.Count), "want 1..%d connections", maxTrafficCount)
	}
	if (len(t.Expect) == 0) == (t.Backends == 0) {
		return fieldErr(src, field, "", "want exactly one of expect (NAME: WEIGHT, …) and backends (how many share the traffic evenly)")
	}
	if len(t.Expect) > maxListItems || t.Backends < 0 || t.Backends > maxListItems {
		return fieldErr(src, field, "", "at most %d backends", maxListItems)
	}
	for name, w := range t.Expect {
		if name == "" || !(w > 0) {
			return fieldErr(src, field+".expect", name, "want a backend name with a positive weight")
		}
	}
	if !(t.Alpha >= 0 && t.Alpha < 1) {
		return fieldErr(src, field+".alpha", fmt.Sprint(t.Alpha), "want a significance level in (0, 1)")
	}
	return nil
}

func (c ClientIPCheck) validate(src, field string) error {
	if c.From == "" || c.To == "" || c.Want == "" {
		return fieldErr(src, field, "", "want from (a lab host), to (IP:PORT) and want (client, or an IP)")
	}
	if c.Count < 0 || c.Count > maxClientIPs {
		return fieldErr(src, field+".count", fmt.Sprint(c.Count), "want 0..%d connections (0: 3)", maxClientIPs)
	}
	return checkTemplates(src, field, []string{c.From, c.To, c.Want})
}

// checkTemplates checks each string's template against placeholder facts.
func checkTemplates(src, field string, texts []string) error {
	for i, t := range texts {
		if err := checkTemplate(src, fmt.Sprintf("%s[%d]", field, i), t); err != nil {
			return err
		}
	}
	return nil
}

func checkTemplate(src, field, text string) error {
	if _, err := Expand(text, placeholderFacts{}); err != nil {
		return fieldErr(src, field, "", "%v", err)
	}
	return nil
}

// checkRegexp checks a template that expands to a regular expression.
func checkRegexp(src, field, text string) error {
	s, err := Expand(text, placeholderFacts{})
	if err != nil {
		return fieldErr(src, field, "", "%v", err)
	}
	if _, err := regexp.Compile(s); err != nil {
		return fieldErr(src, field, text, "not a regular expression: %v", err)
	}
	return nil
}
