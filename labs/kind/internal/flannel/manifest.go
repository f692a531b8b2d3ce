package flannel

import (
	_ "embed"
	"fmt"
	"strings"
)

// Versions and places of what svclab runs for --cni flannel.
const (
	// Name is the --cni value.
	Name = "flannel"
	// Module and Version are flanneld's Go module; the manifest is its
	// ManifestPath.
	Module       = "github.com/flannel-io/flannel"
	Version      = "v0.28.10"
	ManifestPath = "Documentation/kube-flannel.yml"
	// UpstreamSHA256 is the hash of ManifestPath in Module@Version.
	UpstreamSHA256 = "944a3c1f925f117727a1b7272a323c80965da642498397ec7e6ea9bef0f9e6c5"

	// PluginModule@PluginVersion's PluginPackage is the flannel CNI plugin
	// (removed from that module in v1.0; flannel-io/cni-plugin, which has
	// it since, is refused by the module proxy).
	PluginModule  = "github.com/containernetworking/plugins"
	PluginVersion = "v0.9.1"
	PluginPackage = PluginModule + "/plugins/meta/flannel"

	// CNIVersion is the cniVersion of the manifest's conflist as svclab
	// applies it: the highest spec version the v0.9.1 plugin supports.
	CNIVersion         = "0.4.0"
	upstreamCNIVersion = "1.0.0"

	// Namespace and DaemonSet are the manifest's.
	Namespace = "kube-flannel"
	DaemonSet = "kube-flannel-ds"
)

//go:embed kube-flannel.yml
var manifest string

// Manifest is the manifest svclab applies: upstream's with the marked
// change.
func Manifest() string { return manifest }

// markPrefix starts every line svclab added to upstream's text.
const markPrefix = "# svclab:"

// The one changed line, as upstream has it and as svclab applies it.
var (
	upstreamLine = fmt.Sprintf(`      "cniVersion": %q,`, upstreamCNIVersion)
	changedLine  = fmt.Sprintf(`      "cniVersion": %q,`, CNIVersion)
)

// Upstream restores upstream's text from a manifest kept as svclab keeps
// it: the "# svclab:" lines go, and the one changed line is changed back.
// The changed line must be there exactly once, and be marked: the comment
// line just above `cni-conf.json: |` says CHANGED.
func Upstream(m string) (string, error) {
	lines := strings.SplitAfter(m, "\n")
	var out strings.Builder
	changed, marked := 0, false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, markPrefix) {
			if strings.Contains(t, "CHANGED:") && i+2 < len(lines) && strings.TrimSpace(lines[i+2]) == "cni-conf.json: |" {
				marked = true
			}
			continue
		}
		if strings.TrimSuffix(l, "\n") == changedLine {
			changed++
			l = upstreamLine + "\n"
		}
		out.WriteString(l)
	}
	if changed != 1 {
		return "", fmt.Errorf("manifest: want the changed line %q once, found it %d times", strings.TrimSpace(changedLine), changed)
	}
	if !marked {
		return "", fmt.Errorf("manifest: the change is not marked (a %q line saying CHANGED: just above cni-conf.json)", markPrefix)
	}
	return out.String(), nil
}
