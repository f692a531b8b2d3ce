package builtin

import (
	"bufio"
	"io/fs"
	"path"
	"strings"
)

// Example is one built-in file a command takes by name.
type Example struct {
	Kind Kind
	// Name is what the command takes: the file's name without .yaml.
	Name string
	// Path is the file's path in the built-in files (clusters/ in the
	// checkout): single-node.yaml, kind/flannel.yaml, workloads/nginx.yaml.
	Path string
	// About is the first sentence of the comment the file starts with.
	About string
}

// Command is the command line that uses the example.
func (e Example) Command() string {
	switch e.Kind {
	case Cluster:
		return "sudo svclab create cluster --config " + e.Name
	case Workload:
		return "sudo svclab apply -f " + e.Path
	}
	return "sudo svclab create lab --config " + e.Name
}

// List lists the built-in lab files, kind cluster configs and workloads,
// in that order, each sorted by name. (The lessons are `svclab workshop
// list`'s.)
func List() ([]Example, error) {
	var out []Example
	for _, k := range []Kind{Lab, Cluster, Workload} {
		matches, err := fs.Glob(files, path.Join(k.folder(), "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			data, err := fs.ReadFile(files, m)
			if err != nil {
				return nil, err
			}
			out = append(out, Example{Kind: k, Name: strings.TrimSuffix(path.Base(m), ".yaml"), Path: m, About: about(string(data))})
		}
	}
	return out, nil
}

// maxAbout bounds an Example's About.
const maxAbout = 100

// about is the first sentence of the comment a YAML file starts with: its
// lines up to a blank or indented one (an example command), cut after the
// first ". " and at maxAbout characters.
func about(doc string) string {
	var words []string
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "#")
		if !ok || strings.TrimSpace(line) == "" || strings.HasPrefix(line, "  ") {
			break
		}
		words = append(words, strings.Fields(line)...)
	}
	s := strings.Join(words, " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	s = strings.TrimSuffix(s, ":")
	if len(s) > maxAbout {
		cut := strings.LastIndex(s[:maxAbout], " ")
		if cut < 0 {
			cut = maxAbout
		}
		s = strings.TrimRight(s[:cut], ",;:") + "…"
	}
	return s
}
