package flannel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The manifest kept here is upstream's text but for the marked change.
func TestUpstreamTextIsRestoredExactly(t *testing.T) {
	up, err := Upstream(Manifest())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(up))
	if got := hex.EncodeToString(sum[:]); got != UpstreamSHA256 {
		t.Errorf("upstream text restored from kube-flannel.yml has sha256 %s, want %s (%s of %s@%s)", got, UpstreamSHA256, ManifestPath, Module, Version)
	}
}

// Apart from svclab's comment lines, exactly one line differs from
// upstream's: the cniVersion.
func TestExactlyOneLineChanged(t *testing.T) {
	up, err := Upstream(Manifest())
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(Manifest(), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), markPrefix) {
			kept = append(kept, l)
		}
	}
	upLines := strings.Split(up, "\n")
	if len(kept) != len(upLines) {
		t.Fatalf("%d lines kept, upstream has %d", len(kept), len(upLines))
	}
	var diffs []string
	for i := range kept {
		if kept[i] != upLines[i] {
			diffs = append(diffs, upLines[i]+" → "+kept[i])
		}
	}
	want := `      "cniVersion": "1.0.0", →       "cniVersion": "0.4.0",`
	if len(diffs) != 1 || diffs[0] != want {
		t.Errorf("changed lines %q, want only %q", diffs, want)
	}
}

func TestUpstreamRefusesAnUnmarkedOrMissingChange(t *testing.T) {
	m := Manifest()
	unmarked := strings.Replace(m, "CHANGED:", "changed", 1)
	if _, err := Upstream(unmarked); err == nil || !strings.Contains(err.Error(), "not marked") {
		t.Errorf("unmarked change: got %v, want an error saying it is not marked", err)
	}
	reverted := strings.Replace(m, `"cniVersion": "0.4.0"`, `"cniVersion": "1.0.0"`, 1)
	if _, err := Upstream(reverted); err == nil || !strings.Contains(err.Error(), "0 times") {
		t.Errorf("no change: got %v, want an error", err)
	}
	twice := m + "\n" + changedLine + "\n"
	if _, err := Upstream(twice); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Errorf("the change twice: got %v, want an error", err)
	}
}

func TestParseTheManifest(t *testing.T) {
	info, err := Parse(Manifest())
	if err != nil {
		t.Fatal(err)
	}
	want := Info{
		FlannelImage: "ghcr.io/flannel-io/flannel:" + Version,
		PluginImage:  "ghcr.io/flannel-io/flannel-cni-plugin:v1.9.1-flannel3",
		CNIVersion:   CNIVersion,
		Network:      netip.MustParsePrefix("10.244.0.0/16"),
		EnableIPv4:   true, // flannel's default: the manifest leaves it out
		Backend:      Backend{Type: "vxlan"},
	}
	if info != want {
		t.Errorf("Parse:\n got %+v\nwant %+v", info, want)
	}
	if vni, port := info.Backend.VXLAN(); vni != 1 || port != 8472 {
		t.Errorf("VXLAN() = %d, %d; want VNI 1, port 8472 (flannel's defaults)", vni, port)
	}
	if vni, port := (Backend{Type: "vxlan", VNI: 4096, Port: 4789}).VXLAN(); vni != 4096 || port != 4789 {
		t.Errorf("VXLAN() with VNI and Port set = %d, %d", vni, port)
	}
}

func TestParseErrors(t *testing.T) {
	m := Manifest()
	for name, tc := range map[string]struct{ manifest, want string }{
		"no DaemonSet":        {strings.Replace(m, "kind: DaemonSet", "kind: Deployment", 1), "no DaemonSet"},
		"no ConfigMap":        {strings.Replace(m, "kind: ConfigMap", "kind: Secret", 1), "no ConfigMap"},
		"unknown field":       {strings.Replace(m, "  selector:\n", "  selectorr:\n", 1), "selectorr"},
		"bad Network":         {strings.Replace(m, `"Network": "10.244.0.0/16"`, `"Network": "10.244.0.0"`, 1), "Network"},
		"bad net-conf.json":   {strings.Replace(m, `"EnableNFTables": false,`, `"EnableNFTables": false,,`, 1), "net-conf.json"},
		"two flannel images":  {strings.Replace(m, "        image: ghcr.io/flannel-io/flannel:"+Version+"\n        command:\n        - /opt/bin/install-conf", "        image: other/flannel:1\n        command:\n        - /opt/bin/install-conf", 1), "want one flannel image"},
		"no plugin container": {strings.Replace(m, "name: install-cni-plugin", "name: other", 1), "install-cni-plugin"},
		"too big":             {strings.Repeat("#", maxManifest+1), "more than"},
	} {
		if tc.manifest == m {
			t.Errorf("%s: the replacement did not apply", name)
			continue
		}
		if _, err := Parse(tc.manifest); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
}

// The manifest's upstream text is the module's file (the module proxy's
// copy; it is downloaded into the module cache if missing).
func TestUpstreamIsTheModulesFile(t *testing.T) {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	cmd := exec.Command(goBin, "mod", "download", "-json", Module+"@"+Version)
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v", Module, Version, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download -json: %v: %s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(m.Dir, ManifestPath))
	if err != nil {
		t.Fatal(err)
	}
	up, err := Upstream(Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != up {
		t.Errorf("%s of %s@%s differs from the upstream text kept in kube-flannel.yml", ManifestPath, Module, Version)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Manifest())
	f.Add("kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: kube-flannel-ds, namespace: kube-flannel}\n")
	f.Add("---\n---\nkind: ConfigMap\ndata: {net-conf.json: '{}'}\n")
	f.Fuzz(func(t *testing.T, m string) {
		info, err := Parse(m)
		if err != nil {
			return
		}
		if info.FlannelImage == "" || info.PluginImage == "" || !info.Network.IsValid() {
			t.Errorf("Parse accepted %q with %+v", m, info)
		}
		if vni, port := info.Backend.VXLAN(); vni == 0 || port == 0 {
			t.Errorf("VXLAN() = %d, %d", vni, port)
		}
	})
}
