package images

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/svclab/svclab/internal/cmdrun"
)

// Image references svclab loads into the kind clusters it creates.
const (
	// Netexec is the scenario backend (every cluster).
	Netexec = "svclab/netexec:dev"
	// Svclab is svclab alone, for the CNI agent (every cluster).
	Svclab = "svclab/svclab:dev"
	// SvclabProxy is svclab on the node's root filesystem (iptables,
	// nftables, ipset, conntrack), for the proxy DaemonSet (--proxy svclab).
	SvclabProxy = "svclab/svclab-proxy:dev"
)

// Docker runs docker CLI commands against one daemon.
type Docker interface {
	Command(args ...string) cmdrun.Cmd
}

// Spec is one image: a reference, its files and its import changes.
type Spec struct {
	Ref     string
	Base    string   // a root filesystem tar the files go on top of ("" = none)
	Files   []File   // files copied in
	Changes []string // docker import --change
}

// File is a host file copied into the image.
type File struct {
	Source, Path string
	Mode         os.FileMode
}

// binaryLabel is the image label holding the svclab binary's hash.
const binaryLabel = "dev.svclab.binary-sha256"

// Specs are svclab's images for the binary at bin (and its libraries).
// rootfsTar is the kind node's root filesystem (nodeimage.Result.RootfsTar).
func Specs(bin string, libs []string, sum, rootfsTar string) []Spec {
	files := []File{{Source: bin, Path: "/svclab", Mode: 0o755}}
	for _, l := range libs {
		files = append(files, File{Source: l, Path: l, Mode: 0o755})
	}
	label := fmt.Sprintf("LABEL %s=%s", binaryLabel, sum)
	path := "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	alone := append([]File{{Source: bin, Path: "/usr/local/bin/svclab", Mode: 0o755}}, files[1:]...)
	return []Spec{
		{Ref: Netexec, Files: files, Changes: []string{label, `ENTRYPOINT ["/svclab"]`, `CMD ["netexec"]`}},
		{Ref: Svclab, Files: alone, Changes: []string{label, path, `ENTRYPOINT ["/usr/local/bin/svclab"]`}},
		{Ref: SvclabProxy, Base: rootfsTar, Files: []File{{Source: bin, Path: "/usr/local/bin/svclab", Mode: 0o755}},
			Changes: []string{label, path, `ENTRYPOINT ["/usr/local/bin/svclab"]`}},
	}
}

// Ensure builds the wanted images (Netexec, Svclab, SvclabProxy) for the
// binary at bin unless the daemon has them for this very binary.
func Ensure(ctx context.Context, d Docker, bin, rootfsTar string, want []string, out io.Writer) error {
	if out == nil {
		out = io.Discard
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		return err
	}
	libs, err := sharedLibraries(ctx, bin)
	if err != nil {
		return err
	}
	for _, s := range Specs(bin, libs, sum, rootfsTar) {
		if !slices.Contains(want, s.Ref) {
			continue
		}
		have, _ := d.Command("image", "inspect", "--format", fmt.Sprintf(`{{index .Config.Labels %q}}`, binaryLabel), s.Ref).Text(ctx)
		if have == sum {
			continue
		}
		t := time.Now()
		if err := build(ctx, d, s); err != nil {
			return fmt.Errorf("image %s: %w", s.Ref, err)
		}
		fmt.Fprintf(out, "built image %s in %s\n", s.Ref, time.Since(t).Round(10*time.Millisecond))
		// the image this one replaced, now untagged
		d.Command("image", "prune", "-f").Run(ctx)
	}
	return nil
}

func build(ctx context.Context, d Docker, s Spec) error {
	args := []string{"import"}
	for _, c := range s.Changes {
		args = append(args, "--change", c)
	}
	args = append(args, "-", s.Ref)
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := writeTar(pw, s)
		pw.CloseWithError(err)
		errc <- err
	}()
	runErr := d.Command(args...).WithStdin(pr).Run(ctx)
	pr.CloseWithError(errors.New("docker import ended"))
	if err := <-errc; err != nil && runErr == nil {
		return err
	}
	return runErr
}

func writeTar(w io.Writer, s Spec) error {
	tw := tar.NewWriter(w)
	if s.Base != "" {
		f, err := os.Open(s.Base)
		if err != nil {
			return err
		}
		tr := tar.NewReader(f)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return err
			}
			if err := tw.WriteHeader(hdr); err != nil {
				f.Close()
				return err
			}
			if _, err := io.Copy(tw, tr); err != nil {
				f.Close()
				return err
			}
		}
		f.Close()
	} else {
		for _, d := range []string{"tmp/", "etc/", "var/", "run/"} {
			mode := int64(0o755)
			if d == "tmp/" {
				mode = 0o1777
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode}); err != nil {
				return err
			}
		}
	}
	dirs := map[string]bool{}
	for _, f := range s.Files {
		parts := strings.Split(strings.Trim(f.Path, "/"), "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if dirs[d] || s.Base != "" {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755}); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(f.Source)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.Path, "/"), Mode: int64(f.Mode), Size: int64(len(data))}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// lddLine matches "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" and
// "/lib64/ld-linux-x86-64.so.2 (0x…)".
var lddLine = regexp.MustCompile(`(?:=>\s*)?(/\S+)\s+\(0x`)

// sharedLibraries lists what a dynamically linked binary needs (its
// interpreter and libraries, real paths resolved); nil for a static one.
func sharedLibraries(ctx context.Context, bin string) ([]string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	static := true
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			static = false
		}
	}
	f.Close()
	if static {
		return nil, nil
	}
	out, err := cmdrun.Command("ldd", bin).Text(ctx)
	if err != nil {
		return nil, err
	}
	var libs []string
	for _, m := range lddLine.FindAllStringSubmatch(out, -1) {
		libs = append(libs, m[1])
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("ldd %s: no libraries in %q", bin, out)
	}
	// Each library is copied (through its symlinks) under the path ldd
	// printed, which is where the dynamic loader looks.
	return libs, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
