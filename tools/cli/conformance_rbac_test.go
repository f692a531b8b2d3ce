package cli

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/svclab/svclab/internal/golden"
)

func runConformanceRBAC(args ...string) (string, error) {
	cmd := newConformance()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"rbac"}, args...))
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	return out.String(), err
}

// TestConformanceRBACGolden: the RBAC `svclab conformance rbac` prints,
// with the disruptive Role, bound to a user and a service account.
func TestConformanceRBACGolden(t *testing.T) {
	out, err := runConformanceRBAC("--disruptive", "--user", "ci-bot", "--service-account", "conformance/runner")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "conformance-rbac.golden.yaml", []byte(out))
}

// TestConformanceRBACIsValidRBAC: every document decodes as the RBAC
// object it says it is; without --disruptive there is no disruptive
// Role, and the default subject is the Job's service account.
func TestConformanceRBACIsValidRBAC(t *testing.T) {
	out, err := runConformanceRBAC("--proxy-config", "kube-proxy-ns/proxy-config")
	if err != nil {
		t.Fatal(err)
	}
	reader := yaml.NewYAMLReader(bufioReader(out))
	kinds := map[string]int{}
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("a document does not decode: %v\n%s", err, doc)
		}
		kinds[gvk.Kind]++
		switch o := obj.(type) {
		case *rbacv1.ClusterRoleBinding:
			if len(o.Subjects) != 1 || o.Subjects[0].Kind != "ServiceAccount" || o.Subjects[0].Namespace+"/"+o.Subjects[0].Name != defaultServiceAccount {
				t.Errorf("subjects %v, want the default service account %s", o.Subjects, defaultServiceAccount)
			}
		case *rbacv1.Role:
			if o.Namespace != "kube-proxy-ns" || !strings.Contains(string(doc), "proxy-config") {
				t.Errorf("Role %s in %s: want it in the proxy ConfigMap's namespace, naming it", o.Name, o.Namespace)
			}
			if strings.Contains(o.Name, "disruptive") {
				t.Errorf("Role %s without --disruptive", o.Name)
			}
		}
	}
	want := map[string]int{"ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
}

// TestConformanceRBACBadInput: a service account without its namespace,
// a proxy ConfigMap without one.
func TestConformanceRBACBadInput(t *testing.T) {
	for _, args := range [][]string{{"--service-account", "runner"}, {"--proxy-config", "kube-proxy"}} {
		if _, err := runConformanceRBAC(args...); err == nil || !strings.Contains(err.Error(), "NAMESPACE/NAME") {
			t.Errorf("%v: %v, want an error asking for NAMESPACE/NAME", args, err)
		}
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }
