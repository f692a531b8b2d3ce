package workshop

import (
	"strings"
	"testing"
)

func TestCheckRequires(t *testing.T) {
	if err := checkRequires("l.yaml", "spec.steps[0].requires", []string{"ipvs"}); err != nil {
		t.Errorf("ipvs: %v", err)
	}
	err := checkRequires("l.yaml", "spec.steps[0].requires", []string{"ipvs", "nft"})
	if err == nil || !strings.Contains(err.Error(), "spec.steps[0].requires[1]") || !strings.Contains(err.Error(), `"nft"`) {
		t.Errorf("nft: got %v, want an error naming spec.steps[0].requires[1] and \"nft\"", err)
	}
	if err := checkRequires("l.yaml", "f", []string{"ipvs", "ipvs"}); err == nil {
		t.Error("ipvs twice: no error")
	}
}

func TestUnmetNothingRequired(t *testing.T) {
	if why := Unmet(nil); why != "" {
		t.Errorf("Unmet(nil) = %q", why)
	}
	if why := Unmet([]string{"ipvs"}); why != "" && !strings.Contains(why, "no IPVS") {
		t.Errorf("Unmet(ipvs) = %q: a reason must say what is missing", why)
	}
}
