package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Kind is what a command reads: it says where a bare name is looked for.
type Kind string

// The kinds of built-in files.
const (
	// Lab is a netns lab file: NAME is clusters/NAME.yaml.
	Lab Kind = "lab file"
	// Cluster is a kind cluster config: NAME is clusters/kind/NAME.yaml.
	Cluster Kind = "kind cluster config"
	// Workload is a manifest (or a folder of them): NAME is
	// clusters/workloads/NAME.yaml.
	Workload Kind = "workload"
)

// folder is where the kind's bare names are looked for.
func (k Kind) folder() string {
	switch k {
	case Cluster:
		return "kind"
	case Workload:
		return "workloads"
	}
	return "."
}

// prefix is the folder the embedded files come from, which a path to them
// may start with (the README's commands are written from the checkout).
const prefix = "clusters/"

// Resolve returns what a command reads for arg (an --config or -f value):
// arg itself when a file or folder of that path exists (or it is "-", or
// cannot be looked up); else the built-in file or folder it names, on
// disk (Path); else an error saying neither exists.
func Resolve(arg string, k Kind) (string, error) {
	if arg == "" || arg == "-" {
		return arg, nil
	}
	if _, err := os.Stat(arg); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return arg, nil // a real file always wins; other errors are the command's to report
	}
	p, ok, err := Path(arg, k)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%s: no such file or directory, and no built-in %s of that name (svclab get examples lists them)", arg, k)
	}
	return p, nil
}

// Path is the built-in file or folder arg names (Lookup) on disk (Dir);
// ok is false when arg names none.
func Path(arg string, k Kind) (path string, ok bool, err error) {
	name, ok := Lookup(arg, k)
	if !ok {
		return "", false, nil
	}
	dir, err := Dir()
	if err != nil {
		return "", false, err
	}
	return filepath.Join(dir, filepath.FromSlash(name)), true, nil
}

// Lookup returns the path in the built-in files (package clusters) that
// arg names, if any:
//
//   - a bare NAME or NAME.yaml: that file in the kind's folder
//     (single-node → single-node.yaml for a Lab, flannel-vxlan →
//     kind/flannel-vxlan.yaml for a Cluster, nginx →
//     workloads/nginx.yaml for a Workload), or the kind's folder itself
//     (workloads);
//   - a path with a slash: that path in the built-in files, with or
//     without the clusters/ prefix (workloads/nginx.yaml,
//     clusters/kind/flannel.yaml, workloads/).
//
// A name that is no valid path inside them (absolute, "..", empty
// elements) names nothing.
func Lookup(arg string, k Kind) (string, bool) {
	if arg == "" || filepath.IsAbs(arg) {
		return "", false
	}
	p := strings.TrimPrefix(strings.TrimSuffix(arg, "/"), "./")
	p = strings.TrimPrefix(p, prefix)
	switch {
	case strings.Contains(p, "/"), p == k.folder():
	case path.Ext(p) == "":
		p = path.Join(k.folder(), p+".yaml")
	default:
		p = path.Join(k.folder(), p)
	}
	if !fs.ValidPath(p) || p == "." {
		return "", false
	}
	if _, err := fs.Stat(files, p); err != nil {
		return "", false
	}
	return p, true
}
