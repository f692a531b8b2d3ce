package nodeimage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/svclab/svclab/internal/cmdrun"
)

// Docker runs docker CLI commands against one daemon (svclab's own, in its
// network namespace, or the user's). dockerhost.Daemon implements it.
type Docker interface {
	Command(args ...string) cmdrun.Cmd
}

// imageExists reports whether the daemon has the image.
func imageExists(ctx context.Context, d Docker, ref string) bool {
	return d.Command("image", "inspect", "--format", "{{.Id}}", ref).Run(ctx) == nil
}

// importArgs is `docker import` of a tar stream on stdin as ref.
func importArgs(ref string, changes []string) []string {
	args := []string{"import"}
	for _, c := range changes {
		args = append(args, "--change", c)
	}
	return append(args, "-", ref)
}

// importImage streams layers into `docker import`.
func importImage(ctx context.Context, d Docker, ref string, changes []string, layers []layer) error {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := writeImageTar(pw, layers)
		pw.CloseWithError(err)
		errc <- err
	}()
	runErr := d.Command(importArgs(ref, changes)...).WithStdin(pr).Run(ctx)
	pr.CloseWithError(errors.New("docker import ended"))
	if err := <-errc; err != nil && runErr == nil {
		return fmt.Errorf("writing the image of %s: %w", ref, err)
	}
	return runErr
}

// pipe runs from | to (docker save | docker exec -i … ctr import).
func pipe(ctx context.Context, from, to cmdrun.Cmd) error {
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	var fromErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, fromErr = from.WithStdout(pw).Output(ctx)
		pw.CloseWithError(fromErr)
	}()
	toErr := to.WithStdin(pr).Run(ctx)
	pr.CloseWithError(errors.New("reader ended"))
	wg.Wait()
	if fromErr != nil {
		return fromErr
	}
	return toErr
}

// containerExec is `docker exec [-i] id args…`.
func containerExec(d Docker, id string, stdin bool, args ...string) cmdrun.Cmd {
	a := []string{"exec"}
	if stdin {
		a = append(a, "-i")
	}
	return d.Command(append(append(a, id), args...)...)
}
