package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/netns/topology"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
	"github.com/svclab/svclab/tools/bench"
	"github.com/svclab/svclab/tools/builtin"
	"github.com/svclab/svclab/tools/workshop"
)

// Shell completion of the values svclab itself knows (completion.go has
// the names a lab knows): lessons and exercises, built-in files, CNIs,
// proxies and proxy modes, conformance labels. Each list comes from where
// the command checks its value, so the two cannot drift apart.

// flagCompletions complete flags of the commands at a path below svclab
// (registerFlagCompletions registers them; a test checks each still
// exists).
var flagCompletions = []struct {
	path, flag string
	complete   cobra.CompletionFunc
}{
	{"create lab", "config", completeBuiltin(builtin.Lab)},
	{"create cluster", "config", completeBuiltin(builtin.Cluster)},
	{"create cluster", "cni", completeOneOf(clusterCNIs())},
	{"create cluster", "proxy", completeOneOf([]string{kind.ProxyStock, kind.ProxySvclab})},
	{"apply", "filename", completeBuiltin(builtin.Workload)},
	{"delete", "filename", completeBuiltin(builtin.Workload)},
	{"workshop start", "cni", completeLessonCNIs},
	{"tour", "cni", completeOneOf(labCNIs())},
	{"bench dataplane", "modes", completeList(benchModes())},
	{"conformance", "label-filter", completeLabelFilter},
}

// registerFlagCompletions registers flagCompletions on root's commands;
// the first that fails (a command or flag renamed) is the error.
func registerFlagCompletions(root *cobra.Command) error {
	for _, c := range flagCompletions {
		cmd, _, err := root.Find(strings.Fields(c.path))
		if err != nil {
			return err
		}
		if err := cmd.RegisterFlagCompletionFunc(c.flag, c.complete); err != nil {
			return err
		}
	}
	return nil
}

// clusterCNIs are create cluster's --cni values.
func clusterCNIs() []string {
	return []string{cni.FlannelVXLAN, cni.CalicoProxyARP, kind.CNIFlannel, kind.CNICalico}
}

// labCNIs are a netns lab's CNIs (a lesson's --cni).
func labCNIs() []string {
	var out []string
	for _, c := range topology.CNIs() {
		out = append(out, string(c))
	}
	return out
}

// benchModes are bench dataplane's --modes names.
func benchModes() []string {
	var out []string
	for _, m := range bench.Modes {
		out = append(out, m.Name)
	}
	return out
}

// completeBuiltin completes a bare word with the working directory's
// files and the built-in files' names (svclab get examples), and a path
// (with a slash, or starting with a dot) with the shell's files.
func completeBuiltin(k builtin.Kind) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if strings.Contains(toComplete, "/") || strings.HasPrefix(toComplete, ".") {
			return nil, cobra.ShellCompDirectiveDefault
		}
		all, err := builtin.List()
		if err != nil {
			return nil, cobra.ShellCompDirectiveDefault
		}
		names := localEntries()
		for _, e := range all {
			switch {
			case e.Kind != k:
			case k == builtin.Workload:
				names = append(names, e.Path)
			default:
				names = append(names, e.Name)
			}
		}
		out := prefixed(names, toComplete)
		if len(out) == 1 && strings.HasSuffix(out[0], "/") {
			return out, cobra.ShellCompDirectiveNoSpace // a folder: its files come next
		}
		return out, cobra.ShellCompDirectiveDefault
	}
}

// localEntries are the working directory's folders (with a slash) and
// manifest files (.json, .yaml, .yml), hidden ones left out.
func localEntries() []string {
	entries, _ := os.ReadDir(".")
	var out []string
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case e.IsDir():
			out = append(out, e.Name()+"/")
		case slices.Contains(manifestExtensions, filepath.Ext(e.Name())):
			out = append(out, e.Name())
		}
	}
	return out
}

// completeOneOf completes one of values.
func completeOneOf(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return prefixed(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeList completes a comma-separated list of values: the values
// not given yet, after what is typed up to the last comma.
func completeList(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := strings.Split(strings.TrimSuffix(done, ","), ",")
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, last) && !slices.Contains(given, v) {
				out = append(out, done+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// completeLabelFilter completes the last label of a ginkgo label filter
// (nodeport && !udp, a,b, (x || y)) with the suite's labels and what each
// selects.
func completeLabelFilter(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cut := strings.LastIndexAny(toComplete, "&|!,( ") + 1
	done, last := toComplete[:cut], toComplete[cut:]
	var out []string
	for _, l := range cmdline.SpecLabels {
		if strings.HasPrefix(l.Name, last) {
			out = append(out, done+l.Name+"\t"+l.About)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeLessonCNIs completes workshop start's --cni: the CNIs the
// lesson named first is written for, else a lab's.
func completeLessonCNIs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cnis := labCNIs()
	if len(args) > 0 {
		if l, err := findLessonFor(cmd, args[0]); err == nil && len(l.Spec.CNIs) > 0 {
			cnis = l.Spec.CNIs
		}
	}
	return prefixed(cnis, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// findLessonFor loads the lesson name (or path) with the lessons folder
// of cmd's --lessons, else the default one.
func findLessonFor(cmd *cobra.Command, name string) (*workshop.Lesson, error) {
	dir := flagValue(cmd, "lessons")
	if dir == "" && !isPath(name) {
		d, err := workshop.LessonsDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return workshop.FindLesson(dir, name)
}

// completeLessons completes a LESSON argument: the lessons' names in the
// folder of dir (--lessons, the checkout's, else the built-in ones); a
// path is a teacher's lesson folder, completed as directories.
func completeLessons(dir func() (string, error)) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if isPath(toComplete) || strings.HasPrefix(toComplete, ".") {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
		d, err := dir()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(d, e.Name(), workshop.FileName)); e.IsDir() && err == nil {
				names = append(names, e.Name())
			}
		}
		return prefixed(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeExercises completes an EXERCISE argument: the exercises of the
// lesson in progress (none when no lesson is, or its state is root's).
func completeExercises(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	st, err := workshop.LoadState()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	l, err := workshop.Load(st.LessonDir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, ex := range l.Spec.Exercises {
		names = append(names, ex.Name)
	}
	return prefixed(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}
