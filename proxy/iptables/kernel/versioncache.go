package kernel

import (
	"os/exec"
	"path/filepath"
	"sync"
)

// versionKey is one iptables binary: the path PATH gives for its name
// (iptables and ip6tables are one program, which answers by the name it
// is run as), the file that path leads to (an alternatives switch from
// legacy to nft changes it), and the network namespace it runs in (""
// for the process's own).
type versionKey struct{ path, file, netns string }

// knownVersions are the versions detectVersion has read in this process.
// A proxy builds runners of the same binary more than once as it starts
// (the IP family check, then the mode's backend: upstream likewise
// builds them twice, and runs `iptables --version` each time); the
// binary at a path does not change under a running process, so the
// second asks nothing. A binary PATH resolves elsewhere (another backend,
// a test's stand-in) is another key.
var knownVersions sync.Map // versionKey → Version

// cachedVersion returns the version of bin in netns, running read only
// the first time that binary is asked about (an error is not
// remembered).
func cachedVersion(bin, netns string, read func() (Version, error)) (Version, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return read() // its error names the program
	}
	file, err := filepath.EvalSymlinks(path)
	if err != nil {
		return read()
	}
	key := versionKey{path, file, netns}
	if v, ok := knownVersions.Load(key); ok {
		return v.(Version), nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	knownVersions.Store(key, v)
	return v, nil
}
