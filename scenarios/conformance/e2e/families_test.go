package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/scenarios/conformance/cmdline"
	"github.com/svclab/svclab/scenarios/kit/kube"
)

// familiesOf are the IP families -ip-family names, as the suite takes
// them (nil for "": the cluster's).
func familiesOf(value string) ([]corev1.IPFamily, error) {
	names, err := cmdline.IPFamilies(value)
	var out []corev1.IPFamily
	for _, n := range names {
		out = append(out, corev1.IPFamily(n))
	}
	return out, err
}

// clusterFamilies are the IP families the specs run in on the cluster f
// names: -ip-family's, else every family the cluster has
// (kube.ClusterFamilies: two reads, before the specs are declared, as
// upstream's e2e reads the kubernetes Service before its specs run).
func clusterFamilies(ctx context.Context, f cmdline.Flags) ([]corev1.IPFamily, error) {
	if f.IPFamily != "" {
		return familiesOf(f.IPFamily)
	}
	cfg, source, err := clusterConfig(f)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	families, err := kube.ClusterFamilies(ctx, cs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return families, nil
}

// kindFamilies are the IP families of a kind cluster made from the kind
// config file (networking.ipFamily: ipv4, the default; ipv6; dual, IPv4
// primary as kind makes it), or -ip-family's.
func kindFamilies(configFile string, f cmdline.Flags) ([]corev1.IPFamily, error) {
	if f.IPFamily != "" {
		return familiesOf(f.IPFamily)
	}
	data, err := os.ReadFile(configFile)
	if err != nil {
		return nil, err
	}
	var config struct {
		Networking struct {
			IPFamily string `json:"ipFamily"`
		} `json:"networking"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return nil, fmt.Errorf("%s: %w", configFile, err)
	}
	if config.Networking.IPFamily == "" {
		return familiesOf("ipv4")
	}
	families, err := familiesOf(config.Networking.IPFamily)
	if err != nil {
		return nil, fmt.Errorf("%s: networking.ipFamily: %w", configFile, err)
	}
	return families, nil
}

// specTreeFamiliesEnv names, for TestSpecTree's child, the IP families
// the tree is declared in (comma-separated; empty: IPv4 alone, untagged).
const specTreeFamiliesEnv = "SVCLAB_CONFORMANCE_SPEC_FAMILIES"

// everyFamily is a dual-stack run's: its tree has every name and label a
// run of any family can have.
var everyFamily = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}

// preflightFamilies are the families of the spec tree --label-filter and
// --focus are checked against and --dry-run lists: -ip-family's; with
// --dry-run on a cluster, the cluster's (its run's specs); else both, so
// that a selection of either family's specs is known.
func preflightFamilies(ctx context.Context, f cmdline.Flags) []corev1.IPFamily {
	if f.IPFamily != "" {
		families, _ := familiesOf(f.IPFamily) // Check refused a bad value
		return families
	}
	if f.DryRun && (f.Kubeconfig != "" || f.InCluster) {
		if families, err := clusterFamilies(ctx, f); err == nil {
			return families
		}
	}
	return everyFamily
}

func joinFamilies(families []corev1.IPFamily) string {
	var names []string
	for _, f := range families {
		names = append(names, string(f))
	}
	return strings.Join(names, ",")
}

func splitFamilies(s string) []corev1.IPFamily {
	var out []corev1.IPFamily
	for _, name := range strings.Split(s, ",") {
		if name != "" {
			out = append(out, corev1.IPFamily(name))
		}
	}
	return out
}
