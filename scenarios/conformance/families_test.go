package conformance

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestFamilyRunsOfAnIPv4ClusterAreUntagged: a single-stack IPv4 run (the
// families nil or IPv4 alone) declares its specs once, with the names and
// objects it always had; every other run once per family, tagged.
func TestFamilyRunsOfAnIPv4ClusterAreUntagged(t *testing.T) {
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	for _, families := range [][]corev1.IPFamily{nil, {v4}} {
		runs := familyRuns(families)
		if len(runs) != 1 || runs[0] != (familyRun{}) {
			t.Errorf("families %v: runs %+v, want one untagged", families, runs)
		}
		if got := runs[0].text("two-pod 50/50 split"); got != "two-pod 50/50 split" {
			t.Errorf("families %v: text %q", families, got)
		}
		if labels := runs[0].labels(); len(labels) != 0 {
			t.Errorf("families %v: labels %v, want none", families, labels)
		}
		m := "kind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n"
		if got, err := runs[0].manifests(m); err != nil || got != m {
			t.Errorf("families %v: manifests changed: %q, %v", families, got, err)
		}
	}
	for _, c := range []struct {
		families []corev1.IPFamily
		texts    []string
		labels   []string
	}{
		{[]corev1.IPFamily{v6}, []string{"split [IPv6]"}, []string{LabelIPv6}},
		{[]corev1.IPFamily{v4, v6}, []string{"split [IPv4]", "split [IPv6]"}, []string{LabelIPv4, LabelIPv6}},
		{[]corev1.IPFamily{v6, v4}, []string{"split [IPv6]", "split [IPv4]"}, []string{LabelIPv6, LabelIPv4}},
	} {
		runs := familyRuns(c.families)
		var texts, labels []string
		for i, r := range runs {
			if r.family != c.families[i] || !r.tagged {
				t.Errorf("families %v: run %d is %+v", c.families, i, r)
			}
			texts = append(texts, r.text("split"))
			labels = append(labels, r.labels()...)
		}
		if !slices.Equal(texts, c.texts) || !slices.Equal(labels, c.labels) {
			t.Errorf("families %v: texts %q labels %q, want %q %q", c.families, texts, labels, c.texts, c.labels)
		}
	}
}

// TestFamilyManifests: a tagged run makes each Service single-stack of
// its family, unless the Service says its own policy or is an
// ExternalName one; other objects stay as they are.
func TestFamilyManifests(t *testing.T) {
	run := familyRun{family: corev1.IPv6Protocol, tagged: true}
	s := &suite{opts: Options{Image: "netexec", ServerImage: "netexec", PullPolicy: "Never"}}
	manifests := s.webService(2) + "\n---\nkind: Service\napiVersion: v1\nmetadata: {name: out}\nspec: {type: ExternalName, externalName: example.com}\n" +
		"---\nkind: Service\napiVersion: v1\nmetadata: {name: both}\nspec:\n  ipFamilyPolicy: PreferDualStack\n  ports: [{port: 80}]\n"
	out, err := run.manifests(manifests)
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]corev1.Service{}
	kinds := map[string]int{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var obj struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in %q", err, doc)
		}
		kinds[obj.Kind]++
		if obj.Kind == "Service" {
			var svc corev1.Service
			if err := yaml.UnmarshalStrict([]byte(doc), &svc); err != nil {
				t.Fatalf("%v in %q", err, doc)
			}
			services[svc.Name] = svc
		}
	}
	if kinds["Deployment"] != 1 || kinds["Pod"] != 1 || kinds["Service"] != 3 {
		t.Errorf("objects %v, want the Deployment, the probe pod and 3 Services", kinds)
	}
	web := services["web"]
	if web.Spec.IPFamilyPolicy == nil || *web.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || !slices.Equal(web.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv6Protocol}) {
		t.Errorf("web: policy %v, families %v; want SingleStack [IPv6]", web.Spec.IPFamilyPolicy, web.Spec.IPFamilies)
	}
	if len(web.Spec.Ports) != 1 || web.Spec.Ports[0].Port != 80 || web.Spec.Selector["app"] != "web" {
		t.Errorf("web lost its spec: %+v", web.Spec)
	}
	if svc := services["out"]; svc.Spec.IPFamilyPolicy != nil || len(svc.Spec.IPFamilies) > 0 {
		t.Errorf("ExternalName Service given families: %+v", svc.Spec)
	}
	if svc := services["both"]; *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack || len(svc.Spec.IPFamilies) > 0 {
		t.Errorf("a Service's own policy overridden: %+v", svc.Spec)
	}
}
