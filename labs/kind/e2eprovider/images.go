package e2eprovider

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/internal/dockerhost"
)

// LoadImage loads an image from the Docker daemon the cluster runs on
// into every node's containerd (what `kind load docker-image` does). With
// svclab's dockerd that is its daemon (DOCKER_HOST=unix:///run/svclab/kind/docker.sock),
// not the host's default one: build or pull the image there, or `docker
// save` it and use LoadImageArchive. svclab's own images are loaded at
// create time already. No extra arguments are taken.
func (p *Provider) LoadImage(ctx context.Context, image string, args ...string) error {
	if len(args) > 0 {
		return fmt.Errorf("LoadImage: unexpected arguments %q", args)
	}
	return p.withNodes(ctx, func(d *dockerhost.Daemon, all []nodes.Node) error {
		if err := d.Command("image", "inspect", "--format", "{{.Id}}", image).Run(ctx); err != nil {
			return fmt.Errorf("image %s is not in the cluster's Docker daemon (DOCKER_HOST=%s): build or pull it there, or load a docker save archive with LoadImageArchive: %w",
				image, d.Host, err)
		}
		return eachNode(all, func(n nodes.Node) error { return loadDockerImage(ctx, d, n, image) })
	})
}

// LoadImageArchive loads the images of an image archive (`docker save`
// output, gzip-compressed or not) into every node's containerd (what
// `kind load image-archive` does). No extra arguments are taken.
func (p *Provider) LoadImageArchive(ctx context.Context, archivePath string, args ...string) error {
	if len(args) > 0 {
		return fmt.Errorf("LoadImageArchive: unexpected arguments %q", args)
	}
	if _, err := os.Stat(archivePath); err != nil {
		return err
	}
	return p.withNodes(ctx, func(_ *dockerhost.Daemon, all []nodes.Node) error {
		return eachNode(all, func(n nodes.Node) error {
			r, err := openArchive(archivePath)
			if err != nil {
				return err
			}
			defer r.Close()
			if err := nodeutils.LoadImageArchive(n, r); err != nil {
				return fmt.Errorf("loading %s into %s: %w", archivePath, n, runError(err))
			}
			return nil
		})
	})
}

// ExportLogs writes the cluster's logs (kind's export: every node's
// journal, containers' logs, kubelet and containerd) into dest, with
// kind.ExportLogs.
func (p *Provider) ExportLogs(ctx context.Context, dest string) error {
	if p.name == "" {
		return errors.New("ExportLogs: no cluster name (create the cluster or call WithName first)")
	}
	return p.withKind(ctx, func(_ *dockerhost.Daemon, kp *cluster.Provider) error {
		return kind.ExportLogs(kp, p.name, dest)
	})
}

// withKind runs f with kind's provider on the daemon the cluster runs on.
func (p *Provider) withKind(ctx context.Context, f func(*dockerhost.Daemon, *cluster.Provider) error) error {
	d, ok := dockerhost.Running(ctx)
	if !ok {
		return fmt.Errorf("cluster %s: no Docker daemon runs", p.name)
	}
	defer d.Done()
	d.Use() // kind runs the docker CLI, which reads DOCKER_HOST
	return f(d, cluster.NewProvider(cluster.ProviderWithDocker()))
}

// withNodes runs f with the cluster's nodes.
func (p *Provider) withNodes(ctx context.Context, f func(*dockerhost.Daemon, []nodes.Node) error) error {
	if p.name == "" {
		return errors.New("no cluster name (create the cluster or call WithName first)")
	}
	return p.withKind(ctx, func(d *dockerhost.Daemon, kp *cluster.Provider) error {
		all, err := kp.ListNodes(p.name)
		if err != nil {
			return fmt.Errorf("nodes of %s: %w", p.name, err)
		}
		if len(all) == 0 {
			return fmt.Errorf("cluster %s has no nodes (does it exist?)", p.name)
		}
		return f(d, all)
	})
}

// eachNode runs f on every node in parallel and joins their errors.
func eachNode(all []nodes.Node, f func(nodes.Node) error) error {
	errs := make(chan error, len(all))
	for _, n := range all {
		go func() { errs <- f(n) }()
	}
	var failed []error
	for range all {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// loadDockerImage streams `docker save image` into node n's containerd.
func loadDockerImage(ctx context.Context, d *dockerhost.Daemon, n nodes.Node, image string) error {
	pr, pw := io.Pipe()
	saved := make(chan error, 1)
	go func() {
		_, err := d.Command("save", image).WithStdout(pw).Output(ctx)
		pw.CloseWithError(err)
		saved <- err
	}()
	err := nodeutils.LoadImageArchive(n, pr)
	pr.Close() // unblocks docker save if the import stopped reading
	if serr := <-saved; serr != nil {
		return fmt.Errorf("docker save %s: %w", image, serr)
	}
	if err != nil {
		return fmt.Errorf("loading %s into %s: %w", image, n, runError(err))
	}
	return nil
}

// openArchive opens an image archive, decompressing it if it is gzipped.
func openArchive(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	return struct {
		io.Reader
		io.Closer
	}{r, f}, nil
}

// runError adds the output of a failed command in a node to its error.
func runError(err error) error {
	if re := kindexec.RunErrorForError(err); re != nil {
		return fmt.Errorf("%w: %s", err, re.Output)
	}
	return err
}
