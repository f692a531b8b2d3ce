package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WriteArchive writes img to path as an image archive in the format
// `docker save` writes since Docker 25: an OCI image layout (oci-layout,
// index.json, blobs/sha256/…) that also holds docker's manifest.json
// naming the same blobs. `ctr images import` (and so `kind load
// image-archive`) reads the layout and keeps the image's digest; `docker
// load`, old or new, reads it too. Its bytes depend on img and tag alone;
// the file appears whole or not at all (it is written beside path, then
// renamed).
func WriteArchive(path string, tag name.Tag, img v1.Image) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename
	err = writeArchive(tmp, tag, img)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the image archive %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// archiveEntry is one file of an archive: its bytes come from open.
type archiveEntry struct {
	name string
	size int64
	open func() (io.ReadCloser, error)
}

// writeArchive writes the archive's entries to w, in a fixed order.
func writeArchive(w io.Writer, tag name.Tag, img v1.Image) error {
	entries, err := archiveEntries(tag, img)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(header("blobs/", tar.TypeDir, 0o755, 0)); err != nil {
		return err
	}
	if err := tw.WriteHeader(header("blobs/sha256/", tar.TypeDir, 0o755, 0)); err != nil {
		return err
	}
	for _, e := range entries {
		if err := writeEntry(tw, e); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	return tw.Close()
}

// archiveEntries are oci-layout, index.json, manifest.json, then the
// blobs: the image's manifest, its configuration and its layers.
func archiveEntries(tag name.Tag, img v1.Image) ([]archiveEntry, error) {
	rawIndex, err := index(tag, img).RawManifest()
	if err != nil {
		return nil, err
	}
	rawManifest, err := img.RawManifest()
	if err != nil {
		return nil, err
	}
	manifestDigest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	rawConfig, err := img.RawConfigFile()
	if err != nil {
		return nil, err
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	docker := tarball.Descriptor{Config: blobPath(configDigest), RepoTags: []string{tag.String()}}
	var layerEntries []archiveEntry
	for _, l := range layers {
		e, err := layerEntry(l)
		if err != nil {
			return nil, err
		}
		docker.Layers = append(docker.Layers, e.name)
		layerEntries = append(layerEntries, e)
	}
	rawDocker, err := json.Marshal(tarball.Manifest{docker})
	if err != nil {
		return nil, err
	}
	return append([]archiveEntry{
		bytesEntry("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)),
		bytesEntry("index.json", rawIndex),
		bytesEntry("manifest.json", rawDocker),
		bytesEntry(blobPath(manifestDigest), rawManifest),
		bytesEntry(blobPath(configDigest), rawConfig),
	}, layerEntries...), nil
}

// layerEntry is a layer's compressed blob.
func layerEntry(l v1.Layer) (archiveEntry, error) {
	digest, err := l.Digest()
	if err != nil {
		return archiveEntry{}, err
	}
	size, err := l.Size()
	if err != nil {
		return archiveEntry{}, err
	}
	return archiveEntry{name: blobPath(digest), size: size, open: l.Compressed}, nil
}

func bytesEntry(name string, data []byte) archiveEntry {
	return archiveEntry{name: name, size: int64(len(data)), open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// blobPath is where a blob is in an OCI layout.
func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// writeEntry writes e's header and exactly e.size bytes.
func writeEntry(tw *tar.Writer, e archiveEntry) error {
	if err := tw.WriteHeader(header(e.name, tar.TypeReg, 0o644, e.size)); err != nil {
		return err
	}
	rc, err := e.open()
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(tw, io.LimitReader(rc, e.size))
	if err != nil {
		return err
	}
	if n != e.size {
		return fmt.Errorf("%d bytes, %d expected", n, e.size)
	}
	return nil
}
