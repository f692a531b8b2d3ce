package kubelet

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/labs/agents/process"
)

// Spec is one pod's server as a node's kubelet runs it.
type Spec struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	// NetNS is the pod's network namespace (its name under /run/netns).
	NetNS string `json:"netns"`
	// PodIPs are what the server reports as the pod's addresses.
	PodIPs []string `json:"podIPs,omitempty"`
	// Ports are the pod's TCP containerPorts, UDPPorts its UDP ones.
	Ports    []int `json:"ports"`
	UDPPorts []int `json:"udpPorts,omitempty"`
	// DelayShutdown is the container's agnhost --delay-shutdown.
	DelayShutdown time.Duration `json:"delayShutdown,omitempty"`
	// Deadline, once set, says the pod terminates: its server is told so
	// and is closed at Deadline (the pod's deletionTimestamp).
	Deadline *time.Time `json:"deadline,omitempty"`

	// Args, when set, make the pod a process of its own instead of a
	// server on the kubelet's sockets (a node's kube-proxy, as kubeadm's
	// DaemonSet pod): the kubelet runs Args in its node's namespace, with
	// its output in Log (a path below the lab's store), restarts it with
	// Backoff whenever it exits, and stops it (SIGTERM, then SIGKILL) when
	// the spec goes. Such a pod has no ports; NetNS is the node's.
	Args    []string        `json:"args,omitempty"`
	Log     string          `json:"log,omitempty"`
	Backoff process.Backoff `json:"backoff,omitempty"`
}

// runsProcess reports whether the spec is a process's (see Args).
func (s Spec) runsProcess() bool { return len(s.Args) > 0 }

// specFile is where a pod's spec is kept, relative to the lab's store.
// Node and pod names are checked as the API server checks them (DNS-1123
// subdomains) before they become a path.
func specFile(node, pod string) (string, error) {
	for _, n := range []struct{ what, name string }{{"node", node}, {"pod", pod}} {
		if errs := validation.IsDNS1123Subdomain(n.name); len(errs) > 0 {
			return "", fmt.Errorf("kubelet spec: %s name %q: %s", n.what, n.name, strings.Join(errs, "; "))
		}
	}
	return filepath.Join("kubelet", node, pod+".json"), nil
}

// WriteSpec records what a node's kubelet is to run for a pod (atomically;
// the kubelet reads it on its next sync).
func WriteSpec(store *labstore.Store, spec Spec) error {
	hasPorts := len(spec.Ports)+len(spec.UDPPorts) > 0
	if spec.Name == "" || spec.Node == "" || spec.NetNS == "" || hasPorts == spec.runsProcess() {
		return fmt.Errorf("kubelet spec of pod %q on node %q: name, node, netns and either a port or a process (args and log) are required", spec.Name, spec.Node)
	}
	if spec.runsProcess() && spec.Log == "" {
		return fmt.Errorf("kubelet spec of pod %q on node %q: a process needs a log", spec.Name, spec.Node)
	}
	file, err := specFile(spec.Node, spec.Name)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFile(file, append(data, '\n'))
}

// RemoveSpec forgets a pod's spec: the next sync stops its server.
func RemoveSpec(store *labstore.Store, node, pod string) error {
	file, err := specFile(node, pod)
	if err != nil {
		return err
	}
	return store.RemoveFile(file)
}

// ReadSpec returns a pod's spec on a node; ok is false when there is none.
func ReadSpec(store *labstore.Store, node, pod string) (spec Spec, ok bool, err error) {
	file, err := specFile(node, pod)
	if err != nil {
		return Spec{}, false, err
	}
	path, err := store.Confine(file)
	if err != nil {
		return Spec{}, false, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Spec{}, false, nil
	}
	if err != nil {
		return Spec{}, false, err
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return Spec{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return spec, true, nil
}

// SpecNode returns the node whose kubelet has a spec for the pod; ok is
// false when no kubelet runs the pod (a pod with its own supervisor, or
// none).
func SpecNode(store *labstore.Store, pod string) (node string, ok bool) {
	if len(validation.IsDNS1123Subdomain(pod)) > 0 {
		return "", false
	}
	matches, _ := filepath.Glob(store.Path("kubelet", "*", pod+".json"))
	if len(matches) == 0 {
		return "", false
	}
	return filepath.Base(filepath.Dir(matches[0])), true
}

// specCache keeps the specs a kubelet read, each with the identity of the
// file it came from, so that a sync reads again only the files written
// since: a sync per pod that read every spec of the node would make a
// node of n pods cost O(n²) to start. Every write of a spec is a new file
// (WriteFile renames a temporary one into place), so a spec whose file has
// the same inode, size and modification time is the one read before.
type specCache struct {
	files map[string]cachedSpec
}

type cachedSpec struct {
	ino, size int64
	mtime     time.Time
	spec      Spec
}

// read returns the specs of the node's pods, by pod name, reading only
// the files that are new or changed since the last read.
func (c *specCache) read(store *labstore.Store, node string) (map[string]Spec, error) {
	if errs := validation.IsDNS1123Subdomain(node); len(errs) > 0 {
		return nil, fmt.Errorf("kubelet: node name %q: %s", node, strings.Join(errs, "; "))
	}
	dir, err := store.Confine("kubelet", node)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		c.files = nil
		return map[string]Spec{}, nil
	}
	if err != nil {
		return nil, err
	}
	specs := make(map[string]Spec, len(entries))
	files := make(map[string]cachedSpec, len(entries))
	for _, e := range entries {
		pod, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(e.Name(), ".") {
			continue // a temporary file of a write under way
		}
		fi, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			return nil, err
		}
		id := cachedSpec{size: fi.Size(), mtime: fi.ModTime()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			id.ino = int64(st.Ino)
		}
		if prev, ok := c.files[pod]; ok && id.ino != 0 && prev.ino == id.ino && prev.size == id.size && prev.mtime.Equal(id.mtime) {
			specs[pod], files[pod] = prev.spec, prev
			continue
		}
		spec, found, err := ReadSpec(store, node, pod)
		if err != nil {
			return nil, err
		}
		if found {
			id.spec = spec
			specs[pod], files[pod] = spec, id
		}
	}
	c.files = files
	return specs, nil
}
