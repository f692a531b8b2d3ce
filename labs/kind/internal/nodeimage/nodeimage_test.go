package nodeimage

import (
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/kind/internal/host"
)

func TestParseComponents(t *testing.T) {
	cs, err := parseComponents(`registry.k8s.io/kube-apiserver:v1.36.4
registry.k8s.io/kube-controller-manager:v1.36.4
registry.k8s.io/kube-scheduler:v1.36.4
registry.k8s.io/kube-proxy:v1.36.4
registry.k8s.io/coredns/coredns:v1.14.2
registry.k8s.io/pause:3.10.1
registry.k8s.io/etcd:3.6.8-0`)
	if err != nil {
		t.Fatal(err)
	}
	etcd, _ := find(cs, "etcd")
	dns, _ := find(cs, "coredns")
	proxy, _ := find(cs, "kube-proxy")
	if etcd.Version != "v3.6.8" || dns.Version != "v1.14.2" || !proxy.WithTools || len(cs) != 7 {
		t.Fatalf("components %+v", cs)
	}
	if _, err := parseComponents("registry.k8s.io/something-else:v1"); err == nil {
		t.Fatal("unknown image: want an error")
	}
}

func TestKubernetesGoMod(t *testing.T) {
	p, err := kubernetesProgram("v1.36.4", parseStagingReplaces("replace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/foo => ../foo\n)\n"))
	if err != nil {
		t.Fatal(err)
	}
	mod := p.goMod()
	for _, want := range []string{"require k8s.io/kubernetes v1.36.4", "k8s.io/api => k8s.io/api v0.36.4"} {
		if !strings.Contains(mod, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
	if strings.Contains(mod, "k8s.io/foo") {
		t.Errorf("go.mod replaces a non-staging module:\n%s", mod)
	}
	if !strings.Contains(p.LDFlags, "k8s.io/component-base/version.gitVersion=v1.36.4") {
		t.Errorf("ldflags %s", p.LDFlags)
	}
}

func TestContainerdConfig(t *testing.T) {
	in := "[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n  restrict_oom_score_adj = false\n    SystemdCgroup = true\n"
	out, err := containerdConfig(in, "registry.k8s.io/pause:3.10.1", host.Quirks{NoCapSysResource: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`sandbox_image = "registry.k8s.io/pause:3.10.1"`, "restrict_oom_score_adj = true", `BinaryName = "/usr/local/sbin/svclab-runc"`} {
		if !strings.Contains(out, want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
	out, _ = containerdConfig(in, "p", host.Quirks{})
	if strings.Contains(out, "BinaryName") || strings.Contains(out, "restrict_oom_score_adj = true") {
		t.Errorf("a normal host got the wrapper:\n%s", out)
	}
}
