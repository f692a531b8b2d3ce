package topology

import (
	"github.com/svclab/svclab/internal/strictyaml"
)

// The file* types mirror the YAML document field by field. They only carry
// strings; convert turns them into the typed Lab.
type fileLab struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   fileMetadata `json:"metadata"`
	Spec       fileSpec     `json:"spec"`
}

type fileMetadata struct {
	Name string `json:"name"`
}

type fileSpec struct {
	CNI           string       `json:"cni"`
	IPFamily      string       `json:"ipFamily"`
	PodSubnet     string       `json:"podSubnet"`
	ServiceSubnet string       `json:"serviceSubnet"`
	Proxy         fileProxy    `json:"proxy"`
	Nodes         []fileNode   `json:"nodes"`
	Clients       []fileClient `json:"clients"`
	LoadBalancer  fileLB       `json:"loadBalancer"`
	ExternalIPs   []string     `json:"externalIPs"`
}

type fileLB struct {
	Pool string `json:"pool"`
}

type fileProxy struct {
	Mode            string `json:"mode"`
	IPTablesBackend string `json:"iptablesBackend"`
}

type fileNode struct {
	Name    string `json:"name"`
	IP      string `json:"ip"`
	PodCIDR string `json:"podCIDR"`
}

type fileClient struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
}

// Load reads, decodes and validates the lab file at path.
func Load(path string) (*Lab, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// ReadFile reads a lab file, at most MaxFileBytes of it: a larger file (or
// an endless one such as /dev/zero) is an *Error after reading
// MaxFileBytes+1 bytes.
func ReadFile(path string) ([]byte, error) {
	return labFile.ReadFile(path)
}

// Parse decodes and validates a lab document. source names the document in
// error messages (usually its path). A document that does not decode (bad
// YAML, an unknown field, a value of the wrong kind) gives that one
// *Error; one that decodes gives every problem of its values at once,
// *Errors joined one per line (see Validate).
func Parse(data []byte, source string) (*Lab, error) {
	f, err := strictyaml.Decode[fileLab](labFile, data, source)
	if err != nil {
		return nil, err
	}
	p := newProblems(source)
	lab := convert(f, p)
	validate(lab, p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return lab, nil
}
