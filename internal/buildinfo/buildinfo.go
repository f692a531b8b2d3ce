package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what `svclab version` prints.
type Info struct {
	// Version is svclab's module version ("(devel)" for a build from a
	// work tree), Revision and Modified the VCS revision and whether the
	// tree had changes (empty when the build recorded no VCS information,
	// e.g. with -buildvcs=false).
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
	// KubernetesAPI is the Kubernetes version whose API svclab speaks:
	// k8s.io/api v0.X.Y is Kubernetes v1.X.Y; APIModule is that module's
	// version as built.
	KubernetesAPI string `json:"kubernetesAPI"`
	APIModule     string `json:"apiModule"`
	Platform      string `json:"platform"`
}

// revision is the VCS revision `make build` stamps in with -ldflags
// "-X github.com/svclab/svclab/internal/buildinfo.revision=…", for builds
// without Go's own VCS stamping (-buildvcs=false, or git refusing a tree
// owned by another user under sudo).
var revision string

// apiModule is the module whose version says the Kubernetes API version.
const apiModule = "k8s.io/api"

// Read returns the running binary's Info.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return FromBuildInfo(bi)
}

// FromBuildInfo is Read on given build information (nil: none recorded).
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Revision: revision}
	if bi == nil {
		return info
	}
	info.GoVersion = bi.GoVersion
	info.Version = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if d.Path == apiModule {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Version
			}
			info.APIModule = v
			info.KubernetesAPI = KubernetesVersion(v)
		}
	}
	return info
}

// KubernetesVersion maps a staging module's version to Kubernetes's:
// v0.37.2 is v1.37.2; anything else is returned as it is.
func KubernetesVersion(module string) string {
	if rest, ok := strings.CutPrefix(module, "v0."); ok {
		return "v1." + rest
	}
	return module
}
