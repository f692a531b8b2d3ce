package nodeimage

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// A userland is a part of the node's root filesystem: the files of some
// Debian packages and of everything they depend on, as dpkg installed them
// there (the same binaries, libraries and alternatives as on the node).

// rootfsIndex is what one pass over a root filesystem tar tells about it.
type rootfsIndex struct {
	status   string              // var/lib/dpkg/status
	lists    map[string][]string // package (without :arch) → its files (var/lib/dpkg/info/*.list)
	symlinks map[string]string   // entry name → link target
	links    map[string]string   // hard link name → the entry it links to
	dirs     []string            // directory entries
}

// readRootfsIndex reads the dpkg database and the links of a root
// filesystem tar.
func readRootfsIndex(r io.Reader) (*rootfsIndex, error) {
	idx := &rootfsIndex{lists: map[string][]string{}, symlinks: map[string]string{}, links: map[string]string{}}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return idx, nil
		}
		if err != nil {
			return nil, err
		}
		name := cleanEntry(hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeSymlink:
			idx.symlinks[name] = hdr.Linkname
		case tar.TypeLink:
			idx.links[name] = cleanEntry(hdr.Linkname)
		case tar.TypeDir:
			idx.dirs = append(idx.dirs, name)
		case tar.TypeReg:
			switch {
			case name == "var/lib/dpkg/status":
				b, err := io.ReadAll(io.LimitReader(tr, 64<<20))
				if err != nil {
					return nil, err
				}
				idx.status = string(b)
			case strings.HasPrefix(name, "var/lib/dpkg/info/") && strings.HasSuffix(name, ".list"):
				b, err := io.ReadAll(io.LimitReader(tr, 16<<20))
				if err != nil {
					return nil, err
				}
				pkg := strings.TrimSuffix(path.Base(name), ".list")
				pkg, _, _ = strings.Cut(pkg, ":")
				idx.lists[pkg] = append(idx.lists[pkg], strings.Split(strings.TrimSpace(string(b)), "\n")...)
			}
		}
	}
}

// cleanEntry is a tar entry's name without "./" and trailing "/" (""
// for the root).
func cleanEntry(name string) string {
	name = strings.Trim(path.Clean("/"+name), "/")
	return name
}

// dependencies parses dpkg's status file: for each installed package, the
// packages it depends on (Depends and Pre-Depends; of alternatives "a | b"
// the first installed one, or the first installed package that Provides
// it). A dependency nothing installed satisfies is left out: dpkg would
// not have installed the package, so it can only be a virtual package
// whose provider is out of the root filesystem's database.
func dependencies(status string) map[string][]string {
	type entry struct {
		deps      []string
		installed bool
	}
	entries := map[string]*entry{}
	providers := map[string]string{} // virtual package → an installed package providing it
	var order []string
	for _, para := range strings.Split(status, "\n\n") {
		fields := map[string]string{}
		var last string
		for _, line := range strings.Split(para, "\n") {
			if strings.HasPrefix(line, " ") && last != "" {
				fields[last] += " " + strings.TrimSpace(line)
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			last = k
			fields[k] = strings.TrimSpace(v)
		}
		name := fields["Package"]
		if name == "" {
			continue
		}
		e := &entry{installed: strings.HasSuffix(fields["Status"], " installed")}
		if e.installed && fields["Provides"] != "" {
			for _, v := range strings.Split(fields["Provides"], ",") {
				v, _, _ = strings.Cut(strings.TrimSpace(v), " ")
				if _, ok := providers[v]; !ok && v != "" {
					providers[v] = name
				}
			}
		}
		for _, f := range []string{"Pre-Depends", "Depends"} {
			if fields[f] == "" {
				continue
			}
			for _, d := range strings.Split(fields[f], ",") {
				var alts []string
				for _, a := range strings.Split(d, "|") {
					a = strings.TrimSpace(a)
					a, _, _ = strings.Cut(a, " ")
					a, _, _ = strings.Cut(a, ":")
					if a != "" {
						alts = append(alts, a)
					}
				}
				e.deps = append(e.deps, strings.Join(alts, "|"))
			}
		}
		entries[name] = e
		order = append(order, name)
	}
	out := map[string][]string{}
	for _, name := range order {
		e := entries[name]
		if !e.installed {
			continue
		}
		var deps []string
		for _, d := range e.deps {
			for _, alt := range strings.Split(d, "|") {
				if a, ok := entries[alt]; ok && a.installed {
					deps = append(deps, alt)
					break
				}
				if p, ok := providers[alt]; ok {
					deps = append(deps, p)
					break
				}
			}
		}
		out[name] = deps
	}
	return out
}

// closure is the packages roots depend on, directly or not, roots
// included, sorted. A root that is not installed is an error.
func closure(deps map[string][]string, roots []string) ([]string, error) {
	seen := map[string]bool{}
	todo := slices.Clone(roots)
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[p] {
			continue
		}
		d, ok := deps[p]
		if !ok {
			return nil, fmt.Errorf("package %s is not installed in the node's root filesystem", p)
		}
		seen[p] = true
		todo = append(todo, d...)
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// resolveTop maps a path through the root filesystem's top-level symlinks
// (bin → usr/bin, lib → usr/lib…: dpkg's lists name the unmerged paths).
func resolveTop(symlinks map[string]string, p string) string {
	first, rest, ok := strings.Cut(p, "/")
	target, isLink := symlinks[first]
	if !ok || !isLink || strings.HasPrefix(target, "/") || strings.Contains(target, "..") {
		return p
	}
	return path.Join(target, rest)
}

// userlandSet is the set of entries of the root filesystem tar that make
// up the packages' userland: their files (through the top-level
// symlinks), the alternatives pointing at them (usr/sbin/iptables →
// /etc/alternatives/iptables → /usr/sbin/iptables-nft), the top-level
// directories and symlinks, the parents of every file, and what hard
// links point at.
func (idx *rootfsIndex) userlandSet(pkgs []string) map[string]bool {
	set := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range idx.lists[p] {
			f = strings.Trim(strings.TrimSpace(f), "/")
			if f == "" || f == "." {
				continue
			}
			set[resolveTop(idx.symlinks, f)] = true
		}
	}
	// Alternatives: etc/alternatives/N when its target is in; then every
	// link to /etc/alternatives/N.
	alt := map[string]bool{}
	for name, target := range idx.symlinks {
		if strings.HasPrefix(name, "etc/alternatives/") && set[resolveTop(idx.symlinks, strings.TrimPrefix(target, "/"))] {
			set[name], alt["/"+name] = true, true
		}
	}
	for name, target := range idx.symlinks {
		if alt[target] {
			set[resolveTop(idx.symlinks, name)] = true
		}
	}
	for name, target := range idx.links {
		if set[name] {
			set[target] = true
		}
	}
	for name := range idx.symlinks {
		if !strings.Contains(name, "/") {
			set[name] = true
		}
	}
	for _, d := range idx.dirs {
		if d != "" && !strings.Contains(d, "/") {
			set[d] = true
		}
	}
	for name := range set {
		for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
			set[d] = true
		}
	}
	return set
}

// writeUserland writes the entries of the root filesystem tar at rootfsTar
// that are in set, in their order, to w.
func writeUserland(w io.Writer, rootfsTar string, set map[string]bool) error {
	f, err := os.Open(rootfsTar)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	tw := tar.NewWriter(w)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		name := cleanEntry(hdr.Name)
		if !set[name] {
			continue
		}
		hdr.Name = name
		if hdr.Typeflag == tar.TypeDir {
			hdr.Name += "/"
		}
		if hdr.Typeflag == tar.TypeLink {
			hdr.Linkname = cleanEntry(hdr.Linkname)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}

// buildUserland writes the userland of pkgs, taken from the root
// filesystem tar at rootfsTar, as the tar file out; it returns the
// packages it holds.
func buildUserland(rootfsTar string, pkgs []string, out string) ([]string, error) {
	f, err := os.Open(rootfsTar)
	if err != nil {
		return nil, err
	}
	idx, err := readRootfsIndex(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rootfsTar, err)
	}
	if idx.status == "" {
		return nil, fmt.Errorf("%s: no var/lib/dpkg/status", rootfsTar)
	}
	all, err := closure(dependencies(idx.status), pkgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rootfsTar, err)
	}
	w, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	if err := writeUserland(w, rootfsTar, idx.userlandSet(all)); err != nil {
		w.Close()
		return nil, err
	}
	return all, w.Close()
}
