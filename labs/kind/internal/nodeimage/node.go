package nodeimage

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// nodeImageChanges restore kind's base image settings on the imported
// root filesystem. Kind's STOPSIGNAL SIGRTMIN+3 cannot be set: neither
// docker import nor docker commit take it; kind deletes nodes with
// `docker rm -f`, which does not use it.
var nodeImageChanges = []string{
	"ENV container=docker",
	`ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
}

// commitChanges are the node image's final settings.
var commitChanges = nodeImageChanges

// nodeBinaries are the Kubernetes binaries kind expects in /usr/bin.
var nodeBinaries = []string{"kubeadm", "kubelet", "kubectl"}

// nodeLayers: the root filesystem, the Kubernetes binaries, /kind/version.
func nodeLayers(rootfsTar, kubeBin, version string) []layer {
	ls := []layer{{Tar: rootfsTar}}
	for _, b := range nodeBinaries {
		ls = append(ls, layer{Path: "/usr/bin/" + b, Source: filepath.Join(kubeBin, b), Mode: 0o755})
	}
	return append(ls, layer{Path: "/kind/version", Content: version}, layer{Path: "/usr/local/bin/crictl", Content: crictlShim, Mode: 0o755})
}

// crictlShim stands in for crictl, whose module the Go proxy refuses:
// kind's log export runs `crictl images`; ctr answers instead.
const crictlShim = `#!/bin/sh
# svclab: crictl is not available offline; this shim answers what kind's
# log export asks with ctr (namespace k8s.io).
case "$1" in
images) exec ctr --namespace k8s.io images list ;;
ps) exec ctr --namespace k8s.io containers list ;;
*) echo "crictl is not installed in svclab's offline node image; use: ctr --namespace k8s.io ..." >&2; exit 1 ;;
esac
`

// ctrImportArgs loads a `docker save` stream into the node's containerd
// the way kind's node image build does (pinned, not unpacked).
var ctrImportArgs = []string{"ctr", "--namespace=k8s.io", "images", "import", "--label=io.cri-containerd.pinned=pinned", "--all-platforms", "--no-unpack", "--digests", "-"}

// buildNodeImage imports the node's file system as ref+"-base", starts it
// with only containerd running, loads the component images into that
// containerd, and commits the result as ref.
func buildNodeImage(ctx context.Context, d Docker, ref, rootfsTar, kubeBin, version string, images []string) error {
	base := ref + "-base"
	if err := importImage(ctx, d, base, nodeImageChanges, nodeLayers(rootfsTar, kubeBin, version)); err != nil {
		return err
	}
	defer d.Command("rmi", base).Run(context.Background())
	name := fmt.Sprintf("svclab-nodeimage-build-%d", time.Now().UnixNano())
	if err := d.Command("run", "-d", "--name", name, "--privileged", "--entrypoint", "sleep", base, "infinity").Run(ctx); err != nil {
		return err
	}
	defer d.Command("rm", "-f", name).Run(context.Background())
	if err := containerExec(d, name, false, "sh", "-c", "nohup containerd >/dev/null 2>&1 &").Run(ctx); err != nil {
		return err
	}
	if err := containerExec(d, name, false, "sh", "-c",
		`for i in $(seq 50); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && exit 0; sleep 0.2; done; ctr version`).Run(ctx); err != nil {
		return fmt.Errorf("containerd in the node image did not start: %w", err)
	}
	for _, img := range images {
		if err := pipe(ctx, d.Command("save", img), containerExec(d, name, true, ctrImportArgs...)); err != nil {
			return fmt.Errorf("preload %s: %w", img, err)
		}
	}
	if err := containerExec(d, name, false, "sh", "-c", "pkill containerd; for i in $(seq 50); do pgrep containerd >/dev/null || exit 0; sleep 0.2; done").Run(ctx); err != nil {
		return err
	}
	commit := []string{"commit"}
	for _, c := range commitChanges {
		commit = append(commit, "--change", c)
	}
	return d.Command(append(commit, name, ref)...).Run(ctx)
}
