package labstore

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// TestObjectFilesOfOlderLabsRead: a lab made before object files were JSON
// holds YAML; its files read as they did, by ReadObjects and by the
// proxies' ReadServiceFile.
func TestObjectFilesOfOlderLabsRead(t *testing.T) {
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("older")
	const older = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  clusterIP: 10.96.0.10
  ports:
  - port: 80
    protocol: TCP
`
	if err := os.MkdirAll(s.Path("objects", kindServices), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path("objects", kindServices, "default.web.yaml"), []byte(older), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _, err := s.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := s.ReadServiceFile("default.web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []*corev1.Service{st.Service("default", "web"), svc} {
		if got == nil || got.Spec.ClusterIP != "10.96.0.10" || len(got.Spec.Ports) != 1 || got.Spec.Ports[0].Port != 80 {
			t.Fatalf("the YAML Service reads back as %+v", got)
		}
	}
}

// TestObjectFilesAreJSONThatReadsBack: what encodeObject writes decodes to
// the same object, as JSON and as the YAML it also is.
func TestObjectFilesAreJSONThatReadsBack(t *testing.T) {
	for _, k := range storedKinds {
		files, err := k.files(everyKind())
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if !json.Valid(data) {
				t.Errorf("%s/%s: not JSON: %.40q", k.dir(), name, data)
			}
			var viaYAML map[string]any
			if err := yaml.Unmarshal(data, &viaYAML); err != nil || viaYAML["kind"] == nil {
				t.Errorf("%s/%s: does not read as YAML with a kind: %v", k.dir(), name, err)
			}
		}
	}
	t.Setenv("SVCLAB_STATE_DIR", t.TempDir())
	s := Open("json")
	want := everyKind()
	if _, err := s.WriteObjects(want); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.ReadObjects()
	if err != nil {
		t.Fatal(err)
	}
	// Read back, every object encodes to the very file it was read from.
	for _, k := range storedKinds {
		wrote, err := k.files(want)
		if err != nil {
			t.Fatal(err)
		}
		read, err := k.files(got)
		if err != nil {
			t.Fatal(err)
		}
		if len(read) != len(wrote) {
			t.Errorf("%s: %d objects read back, %d written", k.dir(), len(read), len(wrote))
		}
		for name, data := range wrote {
			if !bytes.Equal(read[name], data) {
				t.Errorf("%s/%s: read back as\n%s\nwritten as\n%s", k.dir(), name, read[name], data)
			}
		}
	}
}

// FuzzDecodeObject: an object file of any content decodes or fails without
// a panic, and a Service that decodes encodes to a file that decodes to
// the same Service.
func FuzzDecodeObject(f *testing.F) {
	svc := everyKind().Services[0]
	encoded, err := encodeObject(svc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(encoded)
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n"))
	f.Add([]byte("  {\"kind\": \"Service\", \"spec\": {\"clusterIP\": \"10.96.0.1\"}}"))
	f.Add([]byte("{"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got corev1.Service
		if err := decodeObject(data, &got); err != nil {
			return
		}
		again, err := encodeObject(&got)
		if err != nil {
			t.Fatalf("a decoded Service does not encode: %v", err)
		}
		var back corev1.Service
		if err := decodeObject(again, &back); err != nil {
			t.Fatalf("an encoded Service does not decode: %v\n%s", err, again)
		}
		if !equality.Semantic.DeepEqual(got, back) {
			t.Fatalf("round trip changed the Service:\n%+v\n%+v", got, back)
		}
	})
}
