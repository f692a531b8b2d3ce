package cni

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
)

func TestConflist(t *testing.T) {
	b, err := Conflist(FlannelVXLAN, netip.MustParsePrefix("10.244.1.0/24"))
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"bridge": "cni0"`, `"subnet": "10.244.1.0/24"`, `"type": "portmap"`} {
		if !strings.Contains(s, want) {
			t.Errorf("flannel conflist lacks %s:\n%s", want, s)
		}
	}
	b, _ = Conflist(CalicoProxyARP, netip.MustParsePrefix("192.168.1.0/24"))
	if !strings.Contains(string(b), `"type": "svclab-cni"`) {
		t.Errorf("calico conflist:\n%s", b)
	}
	if _, err := Conflist("weave", netip.MustParsePrefix("10.0.0.0/24")); err == nil {
		t.Error("unknown variant: want an error")
	}
}

func TestManifestsRender(t *testing.T) {
	p := ManifestParams{Variant: FlannelVXLAN, Image: "svclab/svclab:dev", APIServerHost: "x-control-plane", APIServerPort: "6443", ClusterCIDR: "10.244.0.0/16"}
	m, err := Manifest(p)
	if err != nil || !strings.Contains(m, `args: ["cni","agent","--variant=flannel-vxlan","--cluster-cidr=10.244.0.0/16"]`) || !strings.Contains(m, `value: "x-control-plane"`) {
		t.Fatalf("%v\n%s", err, m)
	}
	pm, err := ProxyManifest(p)
	if err != nil || !strings.Contains(pm, "clusterCIDR: 10.244.0.0/16") || !strings.Contains(pm, `args: ["proxy","--node=$(NODE_NAME)"]`) {
		t.Fatalf("%v\n%s", err, pm)
	}
}

func TestVTEPMACIsLocalUnicast(t *testing.T) {
	m := VTEPMAC("kind-worker", "flannel.1")
	if m[0]&1 != 0 || m[0]&2 == 0 {
		t.Fatalf("%s is not a locally administered unicast MAC", m)
	}
}
