package manifests

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// TestNetexecDeploymentDecodes: the text is a valid Deployment whose
// selector matches its pods and whose container declares the port.
func TestNetexecDeploymentDecodes(t *testing.T) {
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(NetexecDeployment("web", "server", 3, 8080)), &d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers
	if d.Name != "web" || *d.Spec.Replicas != 3 || d.Spec.Selector.MatchLabels["app"] != "web" ||
		d.Spec.Template.Labels["app"] != "web" || len(c) != 1 || c[0].Name != "server" ||
		c[0].Image != "svclab/netexec:dev" || len(c[0].Ports) != 1 || c[0].Ports[0].ContainerPort != 8080 {
		t.Errorf("decoded %+v, want web: 3 replicas of server on 8080 selected by app=web", d)
	}
}
