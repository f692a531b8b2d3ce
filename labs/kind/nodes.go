package kind

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/svclab/svclab/labs/kind/internal/calico"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
	"github.com/svclab/svclab/labs/kind/internal/flannel"
)

// controlPlane finds the (first) control-plane node.
func controlPlane(all []nodes.Node) (nodes.Node, error) {
	cps, err := nodeutils.ControlPlaneNodes(all)
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, fmt.Errorf("no control-plane node")
	}
	return cps[0], nil
}

// loadImages streams `docker save` of each image into every node's
// containerd (what `kind load docker-image` does).
func loadImages(ctx context.Context, d *dockerhost.Daemon, all []nodes.Node, refs []string) error {
	errs := make(chan error, len(all))
	for _, n := range all {
		go func() { errs <- loadImagesInto(ctx, d, n, refs) }()
	}
	var first error
	for range all {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func loadImagesInto(ctx context.Context, d *dockerhost.Daemon, n nodes.Node, refs []string) error {
	for _, ref := range refs {
		pr, pw := io.Pipe()
		errc := make(chan error, 1)
		go func() {
			_, err := d.Command("save", ref).WithStdout(pw).Output(ctx)
			pw.CloseWithError(err)
			errc <- err
		}()
		err := nodeutils.LoadImageArchive(n, pr)
		pr.Close()
		if serr := <-errc; serr != nil {
			return fmt.Errorf("docker save %s: %w", ref, serr)
		}
		if err != nil {
			return fmt.Errorf("loading %s into %s: %w", ref, n, runError(err))
		}
	}
	return nil
}

// kubectl runs kubectl with the admin kubeconfig inside node n.
func kubectl(n nodes.Node, stdin string, args ...string) (string, error) {
	cmd := n.Command("kubectl", append([]string{"--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...)
	if stdin != "" {
		cmd.SetStdin(strings.NewReader(stdin))
	}
	lines, err := kindexec.CombinedOutputLines(cmd)
	out := strings.Join(lines, "\n")
	if err != nil {
		return out, fmt.Errorf("kubectl %s (in %s): %w\n%s", strings.Join(args, " "), n, err, out)
	}
	return out, nil
}

func kubectlApply(n nodes.Node, manifest string) error {
	_, err := kubectl(n, manifest, "apply", "-f", "-")
	return err
}

// waitReady waits for every node to be Ready and the system workloads to
// be rolled out: the pod network's DaemonSet first.
func waitReady(cp nodes.Node, cniName, proxy string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	left := func() string {
		d := time.Until(deadline)
		if d < time.Second {
			d = time.Second
		}
		return fmt.Sprintf("--timeout=%ds", int(d.Seconds()))
	}
	steps := append(podNetworkRollouts(cniName), []string{"wait", "--for=condition=Ready", "nodes", "--all", ""})
	if proxy == ProxySvclab {
		steps = append(steps, []string{"-n", "kube-system", "rollout", "status", "daemonset/svclab-proxy", left()})
	} else {
		steps = append(steps, []string{"-n", "kube-system", "rollout", "status", "daemonset/kube-proxy", left()})
	}
	steps = append(steps, []string{"-n", "kube-system", "rollout", "status", "deployment/coredns", left()})
	for _, s := range steps {
		s[len(s)-1] = left()
		if _, err := kubectl(cp, "", s...); err != nil {
			diag, _ := kubectl(cp, "", "get", "nodes,pods", "-A", "-o", "wide")
			return fmt.Errorf("%w\n%s", err, diag)
		}
	}
	return nil
}

// podNetworkRollouts are the kubectl rollout commands that wait for the
// pod network (the last argument is left for the timeout).
func podNetworkRollouts(cniName string) [][]string {
	rollout := func(ns, what string) []string { return []string{"-n", ns, "rollout", "status", what, ""} }
	switch cniName {
	case flannel.Name:
		return [][]string{rollout(flannel.Namespace, "daemonset/"+flannel.DaemonSet)}
	case calico.Name:
		return [][]string{
			rollout(calico.Namespace, "daemonset/"+calico.DaemonSet),
			rollout(calico.Namespace, "deployment/"+calico.Deployment),
		}
	}
	return [][]string{rollout("kube-system", "daemonset/svclab-cni")}
}

// runError adds the output of a failed kind command to its error.
func runError(err error) error {
	if re := kindexec.RunErrorForError(err); re != nil {
		return fmt.Errorf("%w: %s", err, re.Output)
	}
	return err
}
