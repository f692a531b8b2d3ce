package calico

import (
	"fmt"
	"regexp"
	"strings"
)

// Names the kind backend uses for --cni calico.
const (
	// Name is the --cni value.
	Name = "calico"
	// Namespace, DaemonSet and Deployment are the manifest's.
	Namespace  = "kube-system"
	DaemonSet  = "calico-node"
	Deployment = "calico-kube-controllers"
	// MaxManifestBytes bounds the download (the release manifests are
	// about 0.35 MB).
	MaxManifestBytes = 4 << 20
	// DefaultPoolCIDR is calico-node's IPv4 pool when the manifest leaves
	// CALICO_IPV4POOL_CIDR commented out, as upstream's does.
	DefaultPoolCIDR = "192.168.0.0/16"
)

// Pin is one Calico release: its manifest's URL at the release tag, the
// manifest's sha256, and the registry its images come from.
type Pin struct {
	Version  string
	URL      string
	SHA256   string // lower-case hex; "" means not pinned yet
	Registry string // host serving the registry API (/v2/)
}

// Release is what --cni calico applies.
//
// The SHA256 is empty on purpose: the machine this was written on reaches
// neither GitHub nor any registry, and the only copy of calico.yaml it
// could read (projectcalico/calico manifests/calico.yaml at commit
// 0039c9cd422351e6d4db51b067cffc3b226b6e74, through a code index) is a
// master-branch text whose images are quay.io/calico/*:master, not the
// v3.30.5 release file, so its hash would be wrong. Until someone with
// network pins it (curl -fsSL URL | sha256sum), --cni calico needs the user
// to give it (--calico-manifest-sha256, see WithSHA256) and stops with an
// error saying so, before anything is downloaded or created, without one.
var Release = Pin{
	Version:  "v3.30.5",
	URL:      "https://raw.githubusercontent.com/projectcalico/calico/v3.30.5/manifests/calico.yaml",
	SHA256:   "",
	Registry: "registry-1.docker.io", // docker.io/calico/{cni,node,kube-controllers}:v3.30.5
}

var (
	versionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	sha256RE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Validate checks a pin: a vX.Y.Z version (it names a cache directory),
// an https URL, a registry host, and a pinned sha256.
func (p Pin) Validate() error {
	if !versionRE.MatchString(p.Version) {
		return fmt.Errorf("calico pin: version %q: want vX.Y.Z", p.Version)
	}
	if len(p.URL) < len("https://") || p.URL[:len("https://")] != "https://" {
		return fmt.Errorf("calico pin %s: url %q: want https", p.Version, p.URL)
	}
	if p.Registry == "" {
		return fmt.Errorf("calico pin %s: no registry", p.Version)
	}
	if p.SHA256 == "" {
		return fmt.Errorf("--cni calico: the sha256 of calico %s's manifest (%s) is not pinned in this build (labs/kind/internal/calico/pin.go: it could not be fetched where svclab was built); give it with --calico-manifest-sha256 (from a machine you trust: curl -fsSL %s | sha256sum), or use --cni calico-proxyarp (svclab's offline calico-compatible CNI)", p.Version, p.URL, p.URL)
	}
	if !sha256RE.MatchString(p.SHA256) {
		return fmt.Errorf("calico pin %s: sha256 %q: want 64 lower-case hex digits", p.Version, p.SHA256)
	}
	return nil
}

// WithSHA256 is p verified by sum (the --calico-manifest-sha256 flag): a
// pin without a sha256 takes it; a pinned one keeps its own and refuses a
// different sum (a user's typo or an attack must not override the pin).
// An empty sum changes nothing.
func (p Pin) WithSHA256(sum string) (Pin, error) {
	switch sum = strings.ToLower(strings.TrimSpace(sum)); {
	case sum == "":
		return p, nil
	case !sha256RE.MatchString(sum):
		return p, fmt.Errorf("--calico-manifest-sha256 %q: want 64 hex digits", sum)
	case p.SHA256 == "":
		p.SHA256 = sum
		return p, nil
	case p.SHA256 != sum:
		return p, fmt.Errorf("--calico-manifest-sha256 %s: this build pins calico %s's manifest to sha256 %s", sum, p.Version, p.SHA256)
	}
	return p, nil
}

// Describe is what `get clusters` says about a --cni calico cluster.
func (p Pin) Describe() string {
	return Name + " " + p.Version + " (upstream manifest)"
}
