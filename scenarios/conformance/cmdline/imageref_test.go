package cmdline

import (
	"strings"
	"testing"
)

// TestCheckImage: digest-pinned references pass silently; a tag is
// refused (naming `svclab image push` and --allow-tag), or with allowTag
// passes with a warning; a malformed reference is an error either way.
func TestCheckImage(t *testing.T) {
	const hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	type want int
	const (
		pinned want = iota
		tagOnly
		malformed
	)
	for _, c := range []struct {
		ref  string
		want want
	}{
		{"registry.example/team/svclab@sha256:" + hex, pinned},
		{"127.0.0.1:5000/svclab@sha256:" + hex, pinned},
		{"registry.example/team/svclab:v1@sha256:" + hex, pinned},
		{"svclab@sha256:" + hex, pinned},
		{"svclab/netexec:dev", tagOnly},
		{"registry.k8s.io/e2e-test-images/agnhost:2.53", tagOnly},
		{"registry.example/team/svclab", tagOnly}, // latest, implicitly
		{"registry.example/svclab@sha256:" + hex[:63], malformed},
		{"registry.example/svclab@sha256:" + strings.ToUpper(hex), malformed},
		{"registry.example/svclab@sha512:" + hex + hex, malformed},
		{"registry.example/svclab@md5:0123", malformed},
		{"registry.example/svclab@", malformed},
		{"UPPER/case:v1", malformed},
		{"svclab:v1:v2", malformed},
		{"", malformed},
		{"a b", malformed},
	} {
		for _, allowTag := range []bool{false, true} {
			warning, err := CheckImage(c.ref, allowTag)
			switch {
			case c.want == pinned && (err != nil || warning != ""):
				t.Errorf("CheckImage(%q, %v): %q, %v; want it accepted silently", c.ref, allowTag, warning, err)
			case c.want == malformed && err == nil:
				t.Errorf("CheckImage(%q, %v): accepted (warning %q)", c.ref, allowTag, warning)
			case c.want == malformed && !strings.Contains(err.Error(), "image reference"):
				t.Errorf("CheckImage(%q, %v): %q does not say it is the image reference", c.ref, allowTag, err)
			case c.want == tagOnly && !allowTag:
				if err == nil {
					t.Errorf("CheckImage(%q, false): accepted", c.ref)
				} else if msg := err.Error(); !strings.Contains(msg, c.ref) || !strings.Contains(msg, "svclab image push REGISTRY/REPO") || !strings.Contains(msg, "--allow-tag") {
					t.Errorf("CheckImage(%q, false): %q, want it to name the reference, `svclab image push REGISTRY/REPO` and --allow-tag", c.ref, msg)
				}
			case c.want == tagOnly && allowTag:
				if err != nil || !strings.Contains(warning, c.ref) || !strings.Contains(warning, "not digest-pinned") {
					t.Errorf("CheckImage(%q, true): %q, %v; want a warning naming it", c.ref, warning, err)
				}
			}
		}
	}
}
