package ociimage

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// DefaultTag is the name an archive or layout gives the image when the
// caller names none.
const DefaultTag = "svclab/svclab-conformance:latest"

// Annotations of the image's entry in an OCI layout's index.json, as
// BuildKit writes them: the tag alone, and containerd's full name.
const (
	annotationRefName        = "org.opencontainers.image.ref.name"
	annotationContainerdName = "io.containerd.image.name"
)

// ParseTag parses an image name for an archive or a layout ("" is
// DefaultTag); a name with a digest is refused (the digest is the
// image's own).
func ParseTag(ref string) (name.Tag, error) {
	if ref == "" {
		ref = DefaultTag
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image name %q: %w (want [REGISTRY/]REPO[:TAG], no digest)", ref, err)
	}
	return tag, nil
}

// index is the OCI image index of an archive or a layout: img alone,
// annotated with tag and Platform.
func index(tag name.Tag, img v1.Image) v1.ImageIndex {
	platform := Platform()
	return mutate.AppendManifests(empty.Index, mutate.IndexAddendum{
		Add: img,
		Descriptor: v1.Descriptor{
			Annotations: map[string]string{
				annotationRefName:        tag.TagStr(),
				annotationContainerdName: containerdName(tag),
			},
			Platform: &platform,
		},
	})
}

// containerdName is tag as containerd (and so the kubelet) names images:
// Docker Hub is docker.io, and its single-name repositories are under
// library/ ("ubuntu" is docker.io/library/ubuntu:latest).
func containerdName(tag name.Tag) string {
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + tag.RepositoryStr() + ":" + tag.TagStr()
}

// WriteLayout writes img into dir as an OCI image layout (oci-layout,
// index.json, blobs/sha256/…), its index entry annotated with tag and
// Platform. dir must not exist or be empty: an image is not appended to
// another one's layout.
func WriteLayout(dir string, tag name.Tag, img v1.Image) error {
	if err := emptyOrAbsent(dir); err != nil {
		return err
	}
	if _, err := layout.Write(dir, index(tag, img)); err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return nil
}

// emptyOrAbsent says why dir cannot receive a new layout.
func emptyOrAbsent(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	if len(names) > 0 {
		return fmt.Errorf("OCI layout %s: the directory is not empty (it holds %s): give a new or empty one", dir, names[0])
	}
	return nil
}
