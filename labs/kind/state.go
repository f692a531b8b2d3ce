package kind

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// clustersDir keeps, per cluster, what kind does not: the CNI and proxy
// choices, and kind's kubeconfig.
var clustersDir = filepath.Join(dockerhost.StateDir, "clusters")

// LogsDir is where Delete exports a cluster's logs before deleting it.
var LogsDir = "/var/log/svclab/kind"

func statePath(name string) string      { return filepath.Join(clustersDir, name+".json") }
func kubeconfigPath(name string) string { return filepath.Join(clustersDir, name+".kubeconfig") }

func saveState(c *Cluster) error {
	if err := os.MkdirAll(clustersDir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(statePath(c.Name), data, 0o600)
}

func loadState(name string) (*Cluster, bool) {
	data, err := os.ReadFile(statePath(name))
	if err != nil {
		return nil, false
	}
	var c Cluster
	if json.Unmarshal(data, &c) != nil {
		return nil, false
	}
	return &c, true
}

func removeState(name string) {
	os.Remove(statePath(name))
	os.Remove(kubeconfigPath(name))
}
