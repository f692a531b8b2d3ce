package kind

import (
	"fmt"
	"regexp"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/svclab/svclab/internal/strictyaml"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/host"
)

// Proxy choices.
const (
	ProxyStock  = "stock"  // kind's kube-proxy (kubeProxyMode from the config)
	ProxySvclab = "svclab" // svclab's proxy as a DaemonSet, kubeProxyMode none
)

// Defaults for what a config leaves out.
const (
	DefaultPodSubnet     = "10.244.0.0/16"
	DefaultServiceSubnet = "10.96.0.0/16"
	DefaultName          = "svclab"
)

// MaxConfigBytes bounds a kind cluster config file.
const MaxConfigBytes = 256 << 10

// configFile is the kind cluster config's format for internal/strictyaml:
// its errors and its bound.
var configFile = strictyaml.Format{
	Prefix:             "kind config",
	Kind:               "Cluster",
	Noun:               "kind cluster config",
	SecondDocumentHint: " (write one file per cluster)",
	MaxBytes:           MaxConfigBytes,
}

// LoadConfig reads a kind v1alpha4 Cluster config strictly: unknown
// fields, another kind or apiVersion, or several documents are errors.
func LoadConfig(path string) (*v1alpha4.Cluster, error) {
	raw, err := configFile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(raw, path)
}

// ParseConfig is LoadConfig on bytes.
func ParseConfig(raw []byte) (*v1alpha4.Cluster, error) {
	return parseConfig(raw, "")
}

// parseConfig decodes one kind v1alpha4 Cluster document with
// internal/strictyaml (the API server's strict decoding, as every svclab
// file): an unknown field is an error naming its path. source names the
// document in errors.
func parseConfig(raw []byte, source string) (*v1alpha4.Cluster, error) {
	cfg, err := strictyaml.Decode[v1alpha4.Cluster](configFile, raw, source)
	if err != nil {
		return nil, err
	}
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, configFile.FieldError(source, "", "",
			"kind %q apiVersion %q: want kind Cluster, apiVersion kind.x-k8s.io/v1alpha4", cfg.Kind, cfg.APIVersion)
	}
	return cfg, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidateName checks a cluster name (it becomes container and host names).
func ValidateName(name string) error {
	if len(name) > 50 || !nameRE.MatchString(name) {
		return fmt.Errorf("cluster name %q: want lower-case letters, digits and '-', at most 50 characters", name)
	}
	return nil
}

// Settings are the choices Create makes from the flags and the config.
type Settings struct {
	Name      string
	CNI       string
	Proxy     string
	ProxyMode string // iptables, nftables, ipvs or none
	// IPFamily is networking.ipFamily (ipv4 when left out).
	IPFamily v1alpha4.ClusterIPFamily
}

// resolveSettings validates the flags against the config.
func resolveSettings(cfg *v1alpha4.Cluster, opts CreateOptions, ipvs bool) (Settings, error) {
	s := Settings{Name: opts.Name, CNI: opts.CNI, Proxy: opts.Proxy}
	if s.Name == "" {
		s.Name = cfg.Name
	}
	if s.Name == "" {
		s.Name = DefaultName
	}
	if err := ValidateName(s.Name); err != nil {
		return s, err
	}
	if s.CNI == "" {
		s.CNI = cni.FlannelVXLAN
	}
	if err := validateCNI(s.CNI); err != nil {
		return s, fmt.Errorf("--cni: %w", err)
	}
	if err := validateNetworking(cfg); err != nil {
		return s, err
	}
	s.IPFamily = ipFamilyOf(cfg)
	if err := checkIPFamilyCNI(s.CNI, s.IPFamily); err != nil {
		return s, err
	}
	if err := checkPodSubnet(s.CNI, s.IPFamily, cfg.Networking.PodSubnet); err != nil {
		return s, err
	}
	if s.Proxy == "" {
		s.Proxy = ProxyStock
	}
	mode := string(cfg.Networking.KubeProxyMode)
	switch s.Proxy {
	case ProxyStock:
		if mode == "" {
			mode = string(v1alpha4.IPTablesProxyMode)
		}
		switch v1alpha4.ProxyMode(mode) {
		case v1alpha4.IPTablesProxyMode, v1alpha4.NFTablesProxyMode:
		case v1alpha4.IPVSProxyMode:
			if !ipvs {
				return s, fmt.Errorf("kubeProxyMode ipvs: this kernel has no IPVS (/proc/net/ip_vs); use iptables or nftables")
			}
		case "none":
			return s, fmt.Errorf("kubeProxyMode none with --proxy stock leaves the cluster without a Service proxy; use --proxy svclab")
		default:
			return s, fmt.Errorf("kubeProxyMode %q: want iptables, nftables, ipvs or none", mode)
		}
	case ProxySvclab:
		if mode != "" && mode != "none" && mode != string(v1alpha4.IPTablesProxyMode) {
			return s, fmt.Errorf("--proxy svclab runs svclab's proxy in iptables mode, but the config asks kubeProxyMode %q", mode)
		}
		mode = "none"
	default:
		return s, fmt.Errorf("--proxy %q: want stock or svclab", s.Proxy)
	}
	s.ProxyMode = mode
	return s, checkIPFamilyProxy(s.Proxy, s.IPFamily)
}

// kubeletCgroupV1Patch lets kubelet ≥ 1.35 run on a cgroup v1 host.
const kubeletCgroupV1Patch = `kind: KubeletConfiguration
apiVersion: kubelet.config.k8s.io/v1beta1
failCgroupV1: false
`

// adaptConfig returns the config kind gets: the user's, with the pod
// network disabled (svclab installs its own), default subnets (kind's
// for its ipFamily), the proxy mode, and the host's patches.
func adaptConfig(in *v1alpha4.Cluster, s Settings, q host.Quirks) *v1alpha4.Cluster {
	cfg := in.DeepCopy()
	cfg.Name = s.Name
	cfg.Networking.DisableDefaultCNI = true
	cfg.Networking.PodSubnet = podSubnetOf(in)
	cfg.Networking.ServiceSubnet = serviceSubnetOf(in)
	cfg.Networking.KubeProxyMode = v1alpha4.ProxyMode(s.ProxyMode)
	if q.CgroupV1 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, kubeletCgroupV1Patch)
	}
	if len(cfg.Nodes) == 0 {
		cfg.Nodes = []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}}
	}
	return cfg
}
