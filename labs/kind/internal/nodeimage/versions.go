package nodeimage

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/svclab/svclab/internal/buildinfo"
)

// Versions pins what a node image is made of.
type Versions struct {
	// Kubernetes is the k8s.io/kubernetes module version (v1.36.4); its
	// staging modules (k8s.io/api…) are replaced by the matching v0.x.y.
	Kubernetes string
	// Kind is the sigs.k8s.io/kind module version the base files come from.
	Kind string
	// Suite is the Debian suite of the node's root filesystem.
	Suite string
	// Mirror is the Debian mirror debootstrap uses; its Release file is
	// checked against Debian's archive keyring whatever the scheme.
	Mirror string
}

// DefaultKubernetes is the Kubernetes version svclab's node image runs. It
// is known to build offline from the module proxy (v1.36.5 does not: its
// checksum verification fails).
const DefaultKubernetes = buildinfo.Follows

// DefaultVersions are the versions svclab builds unless told otherwise.
func DefaultVersions() Versions {
	return Versions{
		Kubernetes: DefaultKubernetes,
		Kind:       KindModuleVersion(),
		Suite:      "bookworm",
		Mirror:     "https://deb.debian.org/debian", // served over https (HTTP/2 200 for dists/bookworm/Release when checked)
	}
}

// KindModuleVersion is the version of sigs.k8s.io/kind this binary was
// built with (its base files must match the kind code that creates the
// cluster).
func KindModuleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "sigs.k8s.io/kind" {
				if m.Replace != nil {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	return "v0.33.0"
}

// stagingVersion maps a Kubernetes version to its staging modules'
// version: v1.36.4 → v0.36.4.
func stagingVersion(kubernetes string) (string, error) {
	rest, ok := strings.CutPrefix(kubernetes, "v1.")
	if !ok {
		return "", fmt.Errorf("kubernetes version %q: want v1.MINOR.PATCH", kubernetes)
	}
	return "v0." + rest, nil
}

// minorOf returns "36" for "v1.36.4".
func minorOf(kubernetes string) string {
	parts := strings.Split(strings.TrimPrefix(kubernetes, "v"), ".")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}
