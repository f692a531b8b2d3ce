package ociimage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// PushOptions are how an image is pushed.
type PushOptions struct {
	// Keychain gives the registry's credentials; nil is
	// authn.DefaultKeychain (the docker config and its helpers).
	Keychain authn.Keychain
	// Progress receives a line per quarter of the bytes sent; nil is none.
	Progress io.Writer
}

// ParsePushTarget parses where an image is pushed: REGISTRY/REPO[:TAG]
// (docker's defaults: Docker Hub, the tag latest). A digest is refused:
// the digest is the image's own. insecure speaks plain HTTP to the
// registry (go-containerregistry already does for localhost, loopback
// and private addresses).
func ParsePushTarget(ref string, insecure bool) (name.Tag, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	if strings.Contains(ref, "@") {
		return name.Tag{}, fmt.Errorf("push target %q has a digest: give REGISTRY/REPO[:TAG]; the digest reference is printed once pushed", ref)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("push target %q: %w (want REGISTRY/REPO[:TAG])", ref, err)
	}
	return tag, nil
}

// Push pushes img to tag's repository under tag and returns the image's
// digest-pinned reference, REGISTRY/REPO@sha256:…, the reference a
// cluster runs it by. A registry that refuses the credentials (or their
// absence) is one error naming it and saying to log in.
func Push(ctx context.Context, tag name.Tag, img v1.Image, opts PushOptions) (string, error) {
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	keychain := opts.Keychain
	if keychain == nil {
		keychain = authn.DefaultKeychain
	}
	remoteOpts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain)}
	var progress chan v1.Update
	done := make(chan struct{})
	if opts.Progress != nil {
		progress = make(chan v1.Update, 16)
		remoteOpts = append(remoteOpts, remote.WithProgress(progress))
		go func() {
			defer close(done)
			reportProgress(opts.Progress, tag, progress)
		}()
	} else {
		close(done)
	}
	err = remote.Write(tag, img, remoteOpts...)
	<-done
	if err != nil {
		return "", pushError(tag, err)
	}
	return tag.Context().Digest(digest.String()).Name(), nil
}

// reportProgress writes a line when each quarter of the bytes has gone,
// until updates is closed (remote.Write closes it).
func reportProgress(w io.Writer, tag name.Tag, updates <-chan v1.Update) {
	reported := 0
	for u := range updates {
		if u.Error != nil || u.Total == 0 {
			continue
		}
		quarter := int(4 * u.Complete / u.Total)
		if quarter > reported {
			reported = quarter
			fmt.Fprintf(w, "pushing to %s: %d%% of %.1f MB\n", tag.Name(), 25*quarter, float64(u.Total)/1e6)
		}
	}
}

// pushError is err of a push to tag, said once: a refused login names the
// registry and `docker login`; any other error names the registry too.
func pushError(tag name.Tag, err error) error {
	registry := tag.RegistryStr()
	var terr *transport.Error
	if errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("registry %s refused the push to %s (%d %s): log in with `docker login %s` (svclab uses the docker config's credentials) and check that they may push to %s",
			registry, tag.Context().Name(), terr.StatusCode, http.StatusText(terr.StatusCode), registry, tag.Context().Name())
	}
	return fmt.Errorf("pushing to %s on registry %s: %w", tag.Context().Name(), registry, err)
}
