package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/svclab/svclab/internal/boundedread"
	"github.com/svclab/svclab/labs/netns/workload"
	"github.com/svclab/svclab/tools/builtin"
)

// stdinSource is how an -f - manifest is named in errors, as kubectl
// names it.
const stdinSource = "STDIN"

// manifestExtensions are the files kubectl reads from an -f DIR.
var manifestExtensions = []string{".json", ".yaml", ".yml"}

// maxManifestFiles bounds the files one -f DIR (-R) may bring: every file
// holds one object at least, and one apply takes at most that many.
const maxManifestFiles = workload.MaxManifestObjects

// manifestFiles expands -f values as kubectl does: "-" is stdin (once), a
// directory is its .json, .yaml and .yml files in lexical order (its
// subdirectories' too with recursive), any other path is a file whatever
// its name. A directory without such files is an error naming it. A path
// that does not exist may name a built-in workload (statManifestArg).
func manifestFiles(args []string, recursive bool) ([]string, error) {
	var out []string
	stdin := false
	for _, arg := range args {
		if arg == "-" {
			if stdin {
				return nil, errors.New("-f -: stdin can be read once only")
			}
			stdin = true
			out = append(out, arg)
			continue
		}
		arg, fi, err := statManifestArg(arg)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, arg)
			continue
		}
		found, err := dirManifests(arg, recursive)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("-f %s: no .json, .yaml or .yml file in it%s", arg, map[bool]string{false: " (-R reads its subdirectories)", true: ""}[recursive])
		}
		out = append(out, found...)
		if len(out) > maxManifestFiles {
			return nil, fmt.Errorf("-f %s: more than %d manifest files", arg, maxManifestFiles)
		}
	}
	return out, nil
}

// statManifestArg finds an -f value other than "-": the file or directory
// of that path when it exists, else the built-in workload or folder it
// names (tools/builtin: workloads/nginx.yaml, clusters/workloads/,
// nginx), on disk.
func statManifestArg(arg string) (string, fs.FileInfo, error) {
	fi, err := os.Stat(arg)
	if errors.Is(err, fs.ErrNotExist) {
		p, ok, berr := builtin.Path(arg, builtin.Workload)
		switch {
		case berr != nil:
			return "", nil, fmt.Errorf("-f %s: %w", arg, berr)
		case !ok:
			return "", nil, fmt.Errorf("-f %s: %w (nor a built-in workload: svclab get examples lists them)", arg, err)
		}
		arg = p
		fi, err = os.Stat(arg)
	}
	if err != nil {
		return "", nil, fmt.Errorf("-f %s: %w", arg, err)
	}
	return arg, fi, nil
}

// dirManifests lists dir's manifest files in lexical order (filepath.WalkDir's).
func dirManifests(dir string, recursive bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("-f %s: %w", dir, err)
		}
		if d.IsDir() {
			if path != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(manifestExtensions, filepath.Ext(path)) {
			out = append(out, path)
			if len(out) > maxManifestFiles {
				return fmt.Errorf("-f %s: more than %d manifest files", dir, maxManifestFiles)
			}
		}
		return nil
	})
	return out, err
}

// readManifest decodes one -f source: a file (workload.ReadFile bounds
// it) or, for "-", stdin, bounded alike. Errors name the file (or STDIN).
func readManifest(path string, stdin io.Reader) (*workload.Manifests, string, error) {
	if path != "-" {
		data, err := workload.ReadFile(path)
		if err != nil {
			return nil, path, err
		}
		m, err := workload.Decode(data, path)
		return m, path, err
	}
	data, err := boundedread.All(stdin, workload.MaxManifestBytes, stdinSource)
	if boundedread.IsTooLarge(err) {
		return nil, stdinSource, fmt.Errorf("manifest %s: larger than %s", stdinSource, boundedread.Size(workload.MaxManifestBytes))
	}
	if err != nil {
		return nil, stdinSource, fmt.Errorf("manifest %s: %w", stdinSource, err)
	}
	m, err := workload.Decode(data, stdinSource)
	return m, stdinSource, err
}
