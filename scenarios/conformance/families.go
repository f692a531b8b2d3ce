package conformance

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The labels of the specs of one IP family, and of the dual-stack ones.
// A single-stack IPv4 run declares its specs as it always did, without
// them (its JUnit report is unchanged); every other run tags each spec
// with its family.
const (
	LabelIPv4      = "IPv4"
	LabelIPv6      = "IPv6"
	LabelDualStack = "dual-stack"
)

// familyRun is the IP family one declaration of the specs runs in.
type familyRun struct {
	// family is the specs' family; "" on a single-stack IPv4 run: the
	// objects are as they always were, and so is every name.
	family corev1.IPFamily
	// tagged says the run has another family than IPv4 alone: names
	// and labels then say the family.
	tagged bool
}

// familyRuns are the declarations of the specs for a run in families
// (primary first): one untagged, as always, for nil or IPv4 alone; else
// one per family, each tagged.
func familyRuns(families []corev1.IPFamily) []familyRun {
	if len(families) == 0 || (len(families) == 1 && families[0] == corev1.IPv4Protocol) {
		return []familyRun{{}}
	}
	var out []familyRun
	for _, f := range families {
		out = append(out, familyRun{family: f, tagged: true})
	}
	return out
}

// text is a Describe's text in the run: "[IPv6]" (or "[IPv4]") after it
// when tagged, as upstream's e2e names its feature specs.
func (f familyRun) text(s string) string {
	if !f.tagged {
		return s
	}
	return s + " [" + string(f.family) + "]"
}

// labels are the run's family label (none when untagged).
func (f familyRun) labels() Labels {
	switch {
	case !f.tagged:
		return Label()
	case f.family == corev1.IPv6Protocol:
		return Label(LabelIPv6)
	default:
		return Label(LabelIPv4)
	}
}

// manifests are manifests for the run: as they are when untagged; else
// every Service that says nothing of its families (no ipFamilyPolicy)
// and is not an ExternalName one gets `ipFamilyPolicy: SingleStack` and
// `ipFamilies: [<family>]`, so it has a cluster IP of the run's family
// alone, whatever the cluster's primary family.
func (f familyRun) manifests(manifests string) (string, error) {
	if !f.tagged {
		return manifests, nil
	}
	var docs []string
	for _, doc := range strings.Split(manifests, "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		out, err := serviceInFamily(doc, f.family)
		if err != nil {
			return "", err
		}
		docs = append(docs, out)
	}
	return strings.Join(docs, "\n---\n"), nil
}

// serviceInFamily is one manifest document, a Service given family's
// ipFamilyPolicy and ipFamilies as manifests says (any other document as
// it is).
func serviceInFamily(doc string, family corev1.IPFamily) (string, error) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return "", fmt.Errorf("manifest %q: %w", doc, err)
	}
	if obj["kind"] != "Service" {
		return doc, nil
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	if _, set := spec["ipFamilyPolicy"]; set || spec["type"] == string(corev1.ServiceTypeExternalName) {
		return doc, nil
	}
	spec["ipFamilyPolicy"] = string(corev1.IPFamilyPolicySingleStack)
	spec["ipFamilies"] = []any{string(family)}
	out, err := yaml.Marshal(obj)
	return string(out), err
}
