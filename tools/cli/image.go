package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/internal/ociimage"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
)

// newImage is `svclab image`: svclab's own container image (svclab and
// its conformance test binary), built reproducibly from the binaries
// beside this one, written to a file or pushed to a registry, so that a
// cluster svclab did not create can pull it by digest.
func newImage() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build svclab's container image (node agent, netexec, conformance suite) or push it to a registry",
		Long: "svclab's image holds " + ociimage.SvclabPath + " (the entrypoint: the conformance suite's node agent and " +
			"scenario pods run it) and " + ociimage.ConformancePath + " (the suite, for in-cluster runs), for linux/" + ociimage.Platform().Architecture +
			", without a shell or C library: both binaries must be statically linked (CGO_ENABLED=0 make build). " +
			"The same binaries give the same digest.",
		Example: "  CGO_ENABLED=0 make build\n" +
			"  svclab image push registry.example.com/team/svclab    # prints registry.example.com/team/svclab@sha256:…",
	}
	cmd.AddCommand(newImageBuild(), newImagePush())
	return cmd
}

// imageSources are the flags naming the binaries an image is built from.
type imageSources struct{ svclab, conformance string }

func (s *imageSources) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.svclab, "svclab-binary", "", "the svclab binary to put in the image (default: this one)")
	cmd.Flags().StringVar(&s.conformance, "conformance-binary", "", "the conformance test binary (default: "+cmdline.Binary+" beside svclab, or $"+cmdline.BinaryEnv+")")
}

// binaries resolves the defaults: this executable, and the conformance
// binary as `svclab conformance` finds it.
func (s imageSources) binaries() (ociimage.Binaries, error) {
	b := ociimage.Binaries{Svclab: s.svclab, Conformance: s.conformance}
	if b.Svclab == "" {
		exe, err := os.Executable()
		if err != nil {
			return b, fmt.Errorf("finding the svclab binary: %w (give --svclab-binary)", err)
		}
		b.Svclab = exe
	}
	if b.Conformance == "" {
		bin, err := cmdline.Find()
		if err != nil {
			return b, err
		}
		b.Conformance = bin
	}
	return b, nil
}

// buildImage builds the image from s, saying so on stderr; the caller
// closes it.
func buildImage(cmd *cobra.Command, s imageSources) (*ociimage.Image, error) {
	b, err := s.binaries()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "building svclab's image from %s and %s\n", b.Svclab, b.Conformance)
	img, err := ociimage.Build(cmd.Context(), b)
	if err != nil {
		return nil, fmt.Errorf("building svclab's image: %w", err)
	}
	return img, nil
}

// withSignals runs run with a context that SIGINT and SIGTERM cancel, so
// that a stopped build or push removes its temporary layer.
func withSignals(run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		cmd.SetContext(ctx)
		return run(cmd, args)
	}
}

// newImageBuild is `svclab image build`: the image as an archive (docker
// load, ctr images import, kind load image-archive) or an OCI layout
// directory; its digest on stdout.
func newImageBuild() *cobra.Command {
	var src imageSources
	var output, layoutDir, tagRef string
	cmd := &cobra.Command{
		Use:   "build (--output FILE.tar | --layout DIR) [--tag REF]",
		Short: "Write svclab's image as an image archive or an OCI layout; print its digest",
		Long: "Writes svclab's image as an image archive (--output: an OCI layout with docker's manifest.json, as docker save writes it; " +
			"docker load, ctr images import and kind load image-archive read it) or as an OCI image layout directory (--layout), " +
			"named --tag (default " + ociimage.DefaultTag + "), and prints the image's digest (sha256:…) on stdout.",
		Example: "  svclab image build --output svclab-image.tar && docker load -i svclab-image.tar\n" +
			"  svclab image build --layout ./svclab-oci --tag registry.example.com/team/svclab:v1",
		Args: cobra.NoArgs,
		RunE: withSignals(func(cmd *cobra.Command, _ []string) error {
			if (output == "") == (layoutDir == "") {
				return fmt.Errorf("give one of --output FILE.tar and --layout DIR: where to write the image")
			}
			tag, err := ociimage.ParseTag(tagRef)
			if err != nil {
				return fmt.Errorf("--tag: %w", err)
			}
			img, err := buildImage(cmd, src)
			if err != nil {
				return err
			}
			defer img.Close()
			digest, err := img.Digest()
			if err != nil {
				return err
			}
			where := output
			if output != "" {
				err = ociimage.WriteArchive(output, tag, img)
			} else {
				where = layoutDir
				err = ociimage.WriteLayout(layoutDir, tag, img)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%s) to %s\n", tag, digest, where)
			fmt.Fprintln(cmd.OutOrStdout(), digest)
			return nil
		}),
	}
	src.addFlags(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "", "write an image archive to this file")
	cmd.Flags().StringVar(&layoutDir, "layout", "", "write an OCI image layout into this directory (new or empty)")
	cmd.Flags().StringVar(&tagRef, "tag", "", "the image's name in the archive or layout (default "+ociimage.DefaultTag+")")
	cmd.MarkFlagFilename("output", "tar")      //nolint:errcheck // the flag exists
	cmd.MarkFlagDirname("layout")              //nolint:errcheck // the flag exists
	cmd.MarkFlagFilename("svclab-binary")      //nolint:errcheck // the flag exists
	cmd.MarkFlagFilename("conformance-binary") //nolint:errcheck // the flag exists
	return cmd
}

// newImagePush is `svclab image push REGISTRY/REPO[:TAG]`: the image
// pushed with the docker config's credentials; the digest-pinned
// reference alone on stdout.
func newImagePush() *cobra.Command {
	var src imageSources
	var insecure bool
	cmd := &cobra.Command{
		Use:   "push REGISTRY/REPO[:TAG] [--insecure]",
		Short: "Push svclab's image to a registry and print its digest-pinned reference",
		Long: "Builds svclab's image and pushes it to REGISTRY/REPO (tag latest unless given) with the credentials of the docker config " +
			"(docker login; ~/.docker/config.json and its credential helpers), then prints its digest-pinned reference, " +
			"REGISTRY/REPO@sha256:…, alone on stdout: the --image a cluster svclab did not create is given. Progress goes to stderr. " +
			"Plain HTTP is used for localhost, loopback and private addresses, and for any registry with --insecure.",
		Example: "  svclab image push registry.example.com/team/svclab\n" +
			"  IMAGE=$(svclab image push localhost:5000/svclab:dev) && svclab conformance --image \"$IMAGE\"\n" +
			"  svclab image push registry.lan:5000/svclab --insecure   # a plain-HTTP registry",
		Args: cobra.ExactArgs(1),
		RunE: withSignals(func(cmd *cobra.Command, args []string) error {
			tag, err := ociimage.ParsePushTarget(args[0], insecure)
			if err != nil {
				return err
			}
			img, err := buildImage(cmd, src)
			if err != nil {
				return err
			}
			defer img.Close()
			ref, err := ociimage.Push(cmd.Context(), tag, img, ociimage.PushOptions{Progress: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "pushed %s\n", tag.Name())
			fmt.Fprintln(cmd.OutOrStdout(), ref)
			return nil
		}),
	}
	src.addFlags(cmd)
	cmd.Flags().BoolVar(&insecure, "insecure", false, "speak plain HTTP to the registry")
	cmd.MarkFlagFilename("svclab-binary")      //nolint:errcheck // the flag exists
	cmd.MarkFlagFilename("conformance-binary") //nolint:errcheck // the flag exists
	return cmd
}
