package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/svclab/svclab", Version: "v0.4.1"},
		Deps:      []*debug.Module{{Path: "k8s.io/apimachinery", Version: "v0.37.2"}, {Path: "k8s.io/api", Version: "v0.37.2"}},
		Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}},
	}
	got := FromBuildInfo(bi)
	if got.Version != "v0.4.1" || got.Revision != "abc123" || !got.Modified || got.GoVersion != "go1.26.8" ||
		got.KubernetesAPI != "v1.37.2" || got.APIModule != "v0.37.2" {
		t.Errorf("FromBuildInfo = %+v", got)
	}
	bi.Deps[1].Replace = &debug.Module{Path: "k8s.io/api", Version: "v0.36.4"}
	if got := FromBuildInfo(bi); got.KubernetesAPI != "v1.36.4" {
		t.Errorf("a replaced k8s.io/api: Kubernetes API %s, want the replacement's v1.36.4", got.KubernetesAPI)
	}
	if got := FromBuildInfo(nil); got.Version != "unknown" || got.GoVersion == "" {
		t.Errorf("no build info: %+v", got)
	}
}

func TestKubernetesVersion(t *testing.T) {
	for in, want := range map[string]string{"v0.37.2": "v1.37.2", "v0.36.0-rc.1": "v1.36.0-rc.1", "(devel)": "(devel)", "": ""} {
		if got := KubernetesVersion(in); got != want {
			t.Errorf("KubernetesVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
