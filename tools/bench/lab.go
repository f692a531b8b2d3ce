package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/svclab/svclab/labs/netns"
)

// labOptions are the lab operations' options with the time left as their
// bound on waiting for the proxies.
func labOptions(ctx context.Context, opts netns.Options) netns.Options {
	opts.Out = io.Discard
	if dl, ok := ctx.Deadline(); ok {
		opts.Timeout = max(time.Second, time.Until(dl))
	}
	return opts
}

// createLab builds the measurement's lab, under a name of its own.
func createLab(ctx context.Context, dir string, m Mode, opts netns.Options) (*netns.Lab, error) {
	name := fmt.Sprintf("dpbench-%04x", rand.IntN(1<<16))
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte(topologyYAML(name, m)), 0o644); err != nil {
		return nil, err
	}
	lab, _, err := netns.Create(ctx, file, labOptions(ctx, opts))
	return lab, err
}

// startPods applies the pod servers and the client pod and, for a mode the
// lab file cannot name (nftables), writes it into the kube-proxy ConfigMap
// and restarts the proxy, as a user switches modes. It returns the client
// pod's name.
func startPods(ctx context.Context, lab *netns.Lab, dir string, m Mode, opts netns.Options) (string, error) {
	manifest := podsYAML()
	if m.ProxyMode == "nftables" {
		cm, err := modeConfigMap(lab, m.ProxyMode)
		if err != nil {
			return "", err
		}
		manifest += "---\n" + cm
	}
	file := filepath.Join(dir, "pods.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		return "", err
	}
	if err := lab.Apply(ctx, file, opts); err != nil {
		return "", err
	}
	if m.ProxyMode == "nftables" {
		if err := lab.RestartProxies(ctx, []string{nodeName}, opts); err != nil {
			return "", err
		}
	}
	st, _, err := lab.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	for _, p := range st.Pods {
		if p.Labels["app"] == clientApp {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("lab %s: no %s pod after the apply", lab.Name(), clientApp)
}

// modeConfigMap is the lab's kube-proxy ConfigMap with mode set.
func modeConfigMap(lab *netns.Lab, mode string) (string, error) {
	st, _, err := lab.Store.ReadObjects()
	if err != nil {
		return "", err
	}
	cm := st.ConfigMap("kube-system", "kube-proxy")
	if cm == nil {
		return "", fmt.Errorf("lab %s: no kube-system/kube-proxy ConfigMap", lab.Name())
	}
	return configMapWithMode(cm.Data["config.conf"], mode)
}

// onLabOfItsOwn builds a lab of its own for mode m in a temporary folder,
// runs measure on it, and deletes the lab and the folder. It returns why
// the mode cannot be measured here (skipped), or the error of the
// building or of measure.
func onLabOfItsOwn(ctx context.Context, m Mode, opts netns.Options, measure func(lab *netns.Lab, dir string) error) (skipped string, err error) {
	if why := unsupported(m); why != "" {
		return why, nil
	}
	dir, err := os.MkdirTemp("", "svclab-bench-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	lab, err := createLab(ctx, dir, m, opts)
	if err != nil {
		return "", err
	}
	defer netns.Delete(lab.Name()) //nolint:errcheck // best effort; `svclab get leftovers` shows a lab left behind
	return "", measure(lab, dir)
}
