package hostprog

import (
	"os"
	"slices"
)

// Data files svclab reads from Debian packages, by absolute path. Ensure
// takes them as it takes program names: a missing one has its package
// installed.
const (
	// DebianArchiveKeyring holds Debian's archive keys: debootstrap
	// --keyring checks the node image's Release file against it.
	DebianArchiveKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
	// CACertificates is the CA bundle wget checks https mirrors with.
	CACertificates = "/etc/ssl/certs/ca-certificates.crt"
)

// DataFile is a file (not a program) svclab reads from a Debian package.
type DataFile struct {
	Path    string
	Package string
	Uses    []Use
	Why     string
}

// DataFiles is every data file svclab needs from a Debian package.
var DataFiles = []DataFile{
	{DebianArchiveKeyring, "debian-archive-keyring", []Use{Cluster},
		"debootstrap --keyring --force-check-gpg: the node's Debian packages are verified against Debian's archive keys (debootstrap only Recommends the keyring, and installs without Recommends lack it: debootstrap then warns and installs unverified packages)"},
	{CACertificates, "ca-certificates", []Use{Cluster},
		"debootstrap fetches the node's packages from an https mirror with wget"},
}

// NeedsFiles returns the data files use needs, in table order.
func NeedsFiles(use Use) []string {
	var paths []string
	for _, f := range DataFiles {
		if slices.Contains(f.Uses, use) {
			paths = append(paths, f.Path)
		}
	}
	return paths
}

// lookupDataFile returns the declared data file at path as a Program
// (Name is its path) for Ensure.
func lookupDataFile(path string) (Program, bool) {
	i := slices.IndexFunc(DataFiles, func(f DataFile) bool { return f.Path == path })
	if i < 0 {
		return Program{}, false
	}
	f := DataFiles[i]
	return Program{Name: f.Path, Package: f.Package, Uses: f.Uses, Why: f.Why}, true
}

// statFile is the default Host.StatFile: a data file is there when its
// path names a regular file (through links: the keyring may be one).
func statFile(path string) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		return &os.PathError{Op: "stat", Path: path, Err: os.ErrInvalid}
	}
	return err
}
