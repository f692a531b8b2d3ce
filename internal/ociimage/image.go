package ociimage

import (
	"context"
	"fmt"
	"os"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Where the binaries are in the image. The node agent and the scenario
// pods run SvclabPath (selfexec.Argv("/svclab", …)); the in-cluster Job
// runs ConformancePath (cmdline.Binary at the root).
const (
	SvclabPath      = "/svclab"
	ConformancePath = "/svclab-conformance.test"
)

// DefaultCommand is the image's default argument to SvclabPath: the
// netexec server, as svclab/netexec:dev (pods written for agnhost give
// [netexec, …] themselves).
var DefaultCommand = []string{"netexec"}

// Binaries are the two files the image is made of: svclab and its
// conformance test binary, both statically linked for linux/GOARCH.
type Binaries struct {
	Svclab, Conformance string
}

// Image is svclab's image. Its layer is kept in a temporary directory
// until Close.
type Image struct {
	v1.Image
	dir string
}

// Close removes the image's temporary layer; the Image is unusable after.
func (i *Image) Close() error { return os.RemoveAll(i.dir) }

// Platform is the image's platform: linux and the GOARCH svclab was
// built for (the binaries must match it).
func Platform() v1.Platform { return v1.Platform{OS: "linux", Architecture: runtime.GOARCH} }

// Build makes svclab's image from b. It refuses a binary that is not a
// statically linked ELF executable for Platform. The layer is written
// once (the binaries are read once, each from the descriptor it was
// checked on); the same binaries give the same digest. Cancelling ctx
// stops the build and removes what it wrote.
func Build(ctx context.Context, b Binaries) (_ *Image, err error) {
	bins, err := openBinaries(b)
	if err != nil {
		return nil, err
	}
	defer closeBinaries(bins)
	dir, err := os.MkdirTemp("", "svclab-image-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	layerPath, err := writeLayerFile(ctx, dir, bins)
	if err != nil {
		return nil, err
	}
	img, err := assemble(layerPath)
	if err != nil {
		return nil, err
	}
	return &Image{Image: img, dir: dir}, nil
}

// openBinaries opens and checks both binaries.
func openBinaries(b Binaries) ([]*binary, error) {
	var bins []*binary
	for _, f := range []struct{ source, dest, what string }{
		{b.Svclab, SvclabPath, "the svclab binary"},
		{b.Conformance, ConformancePath, "the conformance test binary"},
	} {
		if f.source == "" {
			closeBinaries(bins)
			return nil, fmt.Errorf("%s: no path given", f.what)
		}
		bin, err := openBinary(f.source, f.dest)
		if err != nil {
			closeBinaries(bins)
			return nil, fmt.Errorf("%s: %w", f.what, err)
		}
		bins = append(bins, bin)
	}
	return bins, nil
}

func closeBinaries(bins []*binary) {
	for _, b := range bins {
		b.close()
	}
}

// assemble is the OCI image of the one layer at layerPath and Config.
func assemble(layerPath string) (v1.Image, error) {
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("reading back the image's layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	base, err = mutate.ConfigFile(base, configFile())
	if err != nil {
		return nil, err
	}
	return mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "svclab image build", Comment: "svclab and its conformance test binary"},
	})
}

// configFile is the image's configuration: Platform, the entrypoint
// SvclabPath with DefaultCommand, a PATH, dated epoch.
func configFile() *v1.ConfigFile {
	p := Platform()
	return &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Created:      v1.Time{Time: epoch},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{SvclabPath},
			Cmd:        DefaultCommand,
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			WorkingDir: "/",
			Labels: map[string]string{
				"org.opencontainers.image.title":       "svclab",
				"org.opencontainers.image.description": "svclab (" + SvclabPath + ": node agent, netexec server, traffic) and its conformance suite (" + ConformancePath + ")",
			},
		},
	}
}
