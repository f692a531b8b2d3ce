package vm

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// bootModules are the modules the initramfs loads to reach the root
// filesystem and the I/O ports; everything else is loaded on demand inside
// the guest by modprobe from the full /lib/modules of the root filesystem.
var bootModules = []string{"virtio_pci", "virtio_console", "9pnet_virtio", "9p", "overlay"}

// moduleIndex is what modules.dep and modules.builtin say about a kernel's
// modules (see depmod(8)).
type moduleIndex struct {
	path    map[string]string   // module name → path relative to /lib/modules/VERSION
	deps    map[string][]string // module name → names of the modules it needs
	builtin map[string]bool     // module names compiled into the kernel
}

// moduleName turns "kernel/net/9p/9pnet_virtio.ko.xz" into "9pnet_virtio";
// like modprobe it treats '-' and '_' alike.
func moduleName(p string) string {
	base := path.Base(p)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

// parseModules reads modules.dep ("path: dep-path dep-path…") and
// modules.builtin (one path a line; builtin may be nil).
func parseModules(dep, builtin io.Reader) (*moduleIndex, error) {
	idx := &moduleIndex{path: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{}}
	s := bufio.NewScanner(dep)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		mod, rest, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("modules.dep: malformed line %q", line)
		}
		name := moduleName(mod)
		idx.path[name] = mod
		var deps []string
		for _, d := range strings.Fields(rest) {
			deps = append(deps, moduleName(d))
		}
		idx.deps[name] = deps
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("modules.dep: %w", err)
	}
	if builtin != nil {
		s := bufio.NewScanner(builtin)
		for s.Scan() {
			if line := strings.TrimSpace(s.Text()); line != "" {
				idx.builtin[moduleName(line)] = true
			}
		}
		if err := s.Err(); err != nil {
			return nil, fmt.Errorf("modules.builtin: %w", err)
		}
	}
	return idx, nil
}

// resolve returns the module files to load, in load order, for the named
// modules: every module after the modules it depends on, each once, and
// none that is built into the kernel (`modprobe --show-depends` for each,
// merged). A name that is neither a module nor built in is an error.
func (idx *moduleIndex) resolve(names ...string) ([]string, error) {
	var order []string
	state := map[string]int{} // 0 new, 1 visiting, 2 done
	var visit func(name, from string) error
	visit = func(name, from string) error {
		name = strings.ReplaceAll(name, "-", "_")
		switch state[name] {
		case 1:
			return fmt.Errorf("module dependency cycle through %s", name)
		case 2:
			return nil
		}
		p, ok := idx.path[name]
		if !ok {
			if idx.builtin[name] {
				state[name] = 2
				return nil
			}
			if from != "" {
				return fmt.Errorf("module %s (needed by %s) is not in modules.dep", name, from)
			}
			return fmt.Errorf("module %s is neither in modules.dep nor built in", name)
		}
		state[name] = 1
		for _, d := range idx.deps[name] {
			if err := visit(d, name); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, p)
		return nil
	}
	for _, n := range names {
		if err := visit(n, ""); err != nil {
			return nil, err
		}
	}
	return order, nil
}
