package buildinfo

import (
	"os"
	"regexp"
	"testing"
)

// TestFollowsIsWhatToolsUpstreamBuilds: the release svclab says it follows
// is the one tools/upstream compares with.
func TestFollowsIsWhatToolsUpstreamBuilds(t *testing.T) {
	data, err := os.ReadFile("../../tools/upstream/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("tools/upstream/go.mod requires no k8s.io/kubernetes")
	}
	if string(m[1]) != Follows {
		t.Errorf("tools/upstream builds k8s.io/kubernetes %s, but buildinfo.Follows is %s", m[1], Follows)
	}
}
