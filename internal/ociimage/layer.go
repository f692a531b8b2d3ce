package ociimage

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// epoch is every file time in the image (and its creation time): the
// Unix epoch, as reproducible builds (ko, Bazel's rules_oci) use.
var epoch = time.Unix(0, 0).UTC()

// layerDirs are the directories the layer holds besides the binaries:
// /tmp, writable by all with the sticky bit, as in any root filesystem.
var layerDirs = []struct {
	name string
	mode int64
}{{"tmp/", 0o1777}}

// writeLayer writes the image's one layer, a gzipped tar of layerDirs and
// the binaries (mode 0755, owner 0/0, time epoch), to w: the same
// binaries give the same bytes. gzip.BestSpeed is go-containerregistry's
// own default: svclab's 180 MB of binaries take 4 s and give 80 MB.
func writeLayer(ctx context.Context, w io.Writer, bins []*binary) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	// gzip.Writer's zero Header has no name and a zero time: nothing of
	// the machine or the moment goes into the bytes.
	tw := tar.NewWriter(zw)
	for _, d := range layerDirs {
		if err := tw.WriteHeader(header(d.name, tar.TypeDir, d.mode, 0)); err != nil {
			return err
		}
	}
	for _, b := range bins {
		if err := writeFile(ctx, tw, b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeFile writes one binary's header and exactly its size in bytes.
func writeFile(ctx context.Context, tw *tar.Writer, b *binary) error {
	if err := tw.WriteHeader(header(strings.TrimPrefix(b.path, "/"), tar.TypeReg, 0o755, b.size)); err != nil {
		return err
	}
	n, err := io.Copy(tw, contextReader{ctx, b.content()})
	if err != nil {
		return fmt.Errorf("%s: %w", b.file.Name(), err)
	}
	if n != b.size {
		return fmt.Errorf("%s: %d bytes read, %d expected: the file changed while the image was built", b.file.Name(), n, b.size)
	}
	return nil
}

// header is a tar header of root's (0/0), dated epoch, in the USTAR
// format (no PAX records that could carry access or change times).
func header(name string, typ byte, mode, size int64) *tar.Header {
	return &tar.Header{
		Typeflag: typ,
		Name:     name,
		Mode:     mode,
		Size:     size,
		Uid:      0,
		Gid:      0,
		ModTime:  epoch,
		Format:   tar.FormatUSTAR,
	}
}

// writeLayerFile writes the layer into dir/layer.tar.gz and returns that
// path.
func writeLayerFile(ctx context.Context, dir string, bins []*binary) (string, error) {
	path := filepath.Join(dir, "layer.tar.gz")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	if err := writeLayer(ctx, f, bins); err != nil {
		f.Close()
		return "", fmt.Errorf("writing the image's layer: %w", err)
	}
	return path, f.Close()
}

// contextReader reads r until ctx is cancelled.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
