package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed guest/init.sh
var initScript []byte

//go:embed guest/stage2.sh
var stage2Script []byte

// writeInitramfs writes the initramfs for img to path: the init scripts,
// the root filesystem's static busybox, and the boot modules with their
// dependencies (uncompressed: busybox insmod loads plain .ko files), listed
// in load order in /modules.
// CLI: (cd TREE && find . | cpio -o -H newc) > PATH
func writeInitramfs(ctx context.Context, img *Image, path string) error {
	modDir := filepath.Join(img.Root, "lib", "modules", img.KernelVersion)
	dep, err := os.Open(filepath.Join(modDir, "modules.dep"))
	if err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	defer dep.Close()
	var builtin io.Reader
	if f, err := os.Open(filepath.Join(modDir, "modules.builtin")); err == nil {
		defer f.Close()
		builtin = f
	}
	idx, err := parseModules(dep, builtin)
	if err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	mods, err := idx.resolve(bootModules...)
	if err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	busybox, err := os.ReadFile(filepath.Join(img.Root, "bin", "busybox"))
	if err != nil {
		return fmt.Errorf("initramfs: the static busybox: %w", err)
	}

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := newCpioWriter(f)
	for _, d := range []string{"bin", "dev", "proc", "sys", "host", "lower", "rw", "newroot"} {
		w.Dir(d, 0o755)
	}
	w.CharDev("dev/console", 0o600, 5, 1)
	w.File("init", 0o755, initScript)
	w.File("stage2", 0o755, stage2Script)
	w.File("bin/busybox", 0o755, busybox)
	w.Symlink("bin/sh", "busybox")
	var list []string
	for _, m := range mods {
		data, plain, err := readModule(ctx, filepath.Join(modDir, m))
		if err != nil {
			return fmt.Errorf("initramfs: %w", err)
		}
		w.File(filepath.Join("lib/modules", plain), 0o644, data)
		list = append(list, plain)
	}
	w.File("modules", 0o644, []byte(strings.Join(list, "\n")+"\n"))
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// readModule reads a module file, decompressing .ko.gz (here), .ko.xz and
// .ko.zst (with the host's xz or zstd), and returns its data and its path
// without the compression suffix.
func readModule(ctx context.Context, path string) ([]byte, string, error) {
	rel := path[strings.Index(path, "/lib/modules/")+len("/lib/modules/"):]
	rel = rel[strings.Index(rel, "/")+1:]
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	switch {
	case strings.HasSuffix(path, ".ko"):
		return data, rel, nil
	case strings.HasSuffix(path, ".ko.gz"):
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		out, err := io.ReadAll(r)
		return out, strings.TrimSuffix(rel, ".gz"), err
	case strings.HasSuffix(path, ".ko.xz"), strings.HasSuffix(path, ".ko.zst"):
		tool, ext := "xz", ".xz"
		if strings.HasSuffix(path, ".zst") {
			tool, ext = "zstd", ".zst"
		}
		cmd := exec.CommandContext(ctx, tool, "-dc", path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, "", fmt.Errorf("%s -dc %s: %w: %s", tool, path, err, stderr.String())
		}
		return out, strings.TrimSuffix(rel, ext), nil
	}
	return nil, "", fmt.Errorf("%s: not a kernel module", path)
}
