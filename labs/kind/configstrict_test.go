package kind

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrorsNameTheFieldAndFile: the kind config is read with
// internal/strictyaml, as every svclab file: each problem is one line
// naming the file and the field.
func TestConfigErrorsNameTheFieldAndFile(t *testing.T) {
	const head = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", head + "networking:\n  podSubnett: 10.0.0.0/16\n",
			"kind config: networking.podSubnett: unknown field (known fields here: "},
		{"value of the wrong kind", head + "nodes:\n- role: control-plane\n  extraMounts: 3\n",
			"kind config: nodes[0].extraMounts: expected a list, got the number 3"},
		{"second document", head + "---\n" + head,
			"kind config: document 2: a kind cluster config holds one Cluster: this second document would be ignored"},
		{"duplicate key", head + "name: a\nname: b\n", `kind config: invalid YAML: `},
		{"another kind", "kind: Lab\napiVersion: svclab.dev/v1alpha1\n",
			`kind config: kind "Lab" apiVersion "svclab.dev/v1alpha1": want kind Cluster, apiVersion kind.x-k8s.io/v1alpha4`},
		{"empty", "# nothing\n", "kind config: empty file: expected a Cluster document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.doc))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseConfig: %v\nwant one line starting %q", err, tc.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnam: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil || !strings.HasPrefix(err.Error(), "kind config "+path+": nam: unknown field") {
		t.Fatalf("LoadConfig: %v, want the file and the field named", err)
	}
	cfg, err := ParseConfig([]byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nname: x\nnetworking:\n  podSubnet: 10.1.0.0/16\n  kubeProxyMode: ipvs\nnodes:\n- role: control-plane\n- role: worker\n"))
	if err != nil || cfg.Name != "x" || cfg.Networking.PodSubnet != "10.1.0.0/16" || cfg.Networking.KubeProxyMode != "ipvs" || len(cfg.Nodes) != 2 || cfg.Nodes[1].Role != "worker" {
		t.Fatalf("ParseConfig: %+v, %v", cfg, err)
	}
}
