package workload

import (
	"strings"
	"testing"
)

const (
	podDoc = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: x}]}
`
	svcDoc = `apiVersion: v1
kind: Service
metadata: {name: s}
spec: {ports: [{port: 80}]}
`
	badDoc = `apiVersion: v1
kind: Service
metadata: {name: bad}
spec: {portz: []}
`
)

func TestDecodeSplitsDocumentsLikeKubectl(t *testing.T) {
	cases := []struct{ name, manifest string }{
		{"plain separator", podDoc + "---\n" + svcDoc},
		{"leading separator", "---\n" + podDoc + "---\n" + svcDoc},
		{"separator with a comment", podDoc + "--- # the service\n" + svcDoc},
		{"separator with trailing spaces", podDoc + "---   \n" + svcDoc},
		{"trailing separator", podDoc + "---\n" + svcDoc + "---\n"},
		{"empty documents", "---\n---\n" + podDoc + "---\n\n---\n# only a comment\n---\nnull\n---\n" + svcDoc},
		{"comments before the first document", "# manifests for the lab\n# two objects\n---\n" + podDoc + "---\n" + svcDoc},
		{"indented dashes are content", podDoc + "---\n" + strings.Replace(svcDoc, "metadata: {name: s}", "metadata:\n  name: s\n  annotations: {note: \"\\n---\\n\"}", 1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.manifest), "m.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Pods) != 1 || m.Pods[0].Name != "p" || len(m.Services) != 1 || m.Services[0].Name != "s" {
				t.Errorf("got %d pods, %d services; want pod p and service s", len(m.Pods), len(m.Services))
			}
		})
	}
}

func TestDecodeErrorsNameFileAndDocument(t *testing.T) {
	cases := []struct{ name, manifest, want string }{
		{"second document", podDoc + "---\n" + badDoc, `manifest m.yaml: document 2: unknown field "spec.portz"`},
		// Empty documents are not counted: the bad one is the second object.
		{"after empty documents", "---\n" + podDoc + "---\n# nothing\n---\n\n--- # the bad one\n" + badDoc, `manifest m.yaml: document 2: unknown field "spec.portz"`},
		{"first document", badDoc + "---\n" + podDoc, `manifest m.yaml: document 1: unknown field "spec.portz"`},
		// The bad separator is found while reading the document it ends.
		{"text after the separator", podDoc + "--- kind: Pod\n" + svcDoc, `manifest m.yaml: document 1: invalid Yaml document separator: kind: Pod`},
		{"not YAML", podDoc + "---\n" + "a: [b\n", `manifest m.yaml: document 2: yaml: line 1: did not find expected`},
		{"list", "apiVersion: v1\nkind: List\nitems: []\n", `manifest m.yaml: document 1: kind List is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.manifest), "m.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestDecodeEmptyManifest: an empty manifest used to apply nothing and
// exit 0; like kubectl ("no objects passed to apply") it is an error.
func TestDecodeEmptyManifest(t *testing.T) {
	for _, manifest := range []string{"", "\n", "---\n", "# nothing\n---\n---\n", "null\n"} {
		m, err := Decode([]byte(manifest), "m.yaml")
		if want := "manifest m.yaml: no objects in it (only empty documents or comments)"; err == nil || err.Error() != want {
			t.Errorf("Decode(%q) = %+v, %v; want the error %q", manifest, m, err, want)
		}
	}
}

func TestDecodeLimits(t *testing.T) {
	many := strings.Repeat(podDoc+"---\n", MaxManifestObjects+1)
	if _, err := Decode([]byte(many), "m.yaml"); err == nil || err.Error() != "manifest m.yaml: document 1001: more than 1000 objects in one manifest" {
		t.Errorf("Decode(1001 objects) = %v", err)
	}
	big := podDoc + strings.Repeat("#", MaxManifestBytes)
	if _, err := Decode([]byte(big), "m.yaml"); err == nil || err.Error() != "manifest m.yaml: larger than 8 MiB" {
		t.Errorf("Decode(big) = %v", err)
	}
	if _, err := ReadFile("/dev/zero"); err == nil || err.Error() != "manifest /dev/zero: larger than 8 MiB" {
		t.Errorf("ReadFile(/dev/zero) = %v", err)
	}
}
