package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// extractVmlinux writes the uncompressed kernel (an ELF vmlinux) that the
// bzImage at path carries, for qemu to boot directly through the kernel's
// PVH entry point. Under TCG this saves the ~3 s the bzImage's own xz
// decompressor takes. It fails when the kernel has no PVH entry
// (CONFIG_PVH), and then the bzImage is booted as it is.
// CLI: tail -c +$((PAYLOAD+1)) vmlinuz | xz -dc --single-stream > vmlinux
// (the Linux tree's scripts/extract-vmlinux does the same by magic).
func extractVmlinux(ctx context.Context, bzImage, out string) error {
	data, err := os.ReadFile(bzImage)
	if err != nil {
		return err
	}
	payload, err := bzImagePayload(data)
	if err != nil {
		return fmt.Errorf("%s: %w", bzImage, err)
	}
	vmlinux, err := decompress(ctx, payload)
	if err != nil {
		return fmt.Errorf("%s: %w", bzImage, err)
	}
	if err := checkPVH(vmlinux); err != nil {
		return fmt.Errorf("%s: %w", bzImage, err)
	}
	return os.WriteFile(out, vmlinux, 0o644)
}

// bzImagePayload returns the compressed kernel inside a bzImage, as the
// x86 boot protocol (Documentation/x86/boot.rst, version 2.08 and later)
// locates it: payload_offset and payload_length in the setup header, from
// the start of the protected-mode code.
func bzImagePayload(b []byte) ([]byte, error) {
	if len(b) < 0x250 || string(b[0x202:0x206]) != "HdrS" {
		return nil, fmt.Errorf("not a bzImage (no HdrS setup header)")
	}
	if v := binary.LittleEndian.Uint16(b[0x206:]); v < 0x208 {
		return nil, fmt.Errorf("boot protocol %#x has no payload fields", v)
	}
	setupSects := int(b[0x1f1])
	if setupSects == 0 {
		setupSects = 4
	}
	start := (setupSects+1)*512 + int(binary.LittleEndian.Uint32(b[0x248:]))
	end := start + int(binary.LittleEndian.Uint32(b[0x24c:]))
	if start >= end || end > len(b) {
		return nil, fmt.Errorf("payload [%d, %d) outside the file (%d bytes)", start, end, len(b))
	}
	return b[start:end], nil
}

// decompress undoes the kernel payload's compression, told by its magic:
// gzip here, xz and zstd with the host's xz or zstd.
func decompress(ctx context.Context, p []byte) ([]byte, error) {
	var tool []string
	switch {
	case bytes.HasPrefix(p, []byte{0x1f, 0x8b}):
		r, err := gzip.NewReader(bytes.NewReader(p))
		if err != nil {
			return nil, err
		}
		r.Multistream(false)
		return io.ReadAll(r)
	case bytes.HasPrefix(p, []byte("\xfd7zXZ\x00")):
		tool = []string{"xz", "-dc", "--single-stream"}
	case bytes.HasPrefix(p, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		tool = []string{"zstd", "-dc"}
	default:
		return nil, fmt.Errorf("kernel payload compressed with an unsupported method (magic % x)", p[:min(6, len(p))])
	}
	cmd := exec.CommandContext(ctx, tool[0], tool[1:]...)
	cmd.Stdin = bytes.NewReader(p)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", commandLine(tool[0], tool[1:]), err, stderr.String())
	}
	return out, nil
}

// checkPVH makes sure an ELF kernel has the Xen ELF note
// XEN_ELFNOTE_PHYS32_ENTRY (type 18) that qemu boots it by.
func checkPVH(vmlinux []byte) error {
	f, err := elf.NewFile(bytes.NewReader(vmlinux))
	if err != nil {
		return fmt.Errorf("uncompressed kernel: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		notes, err := io.ReadAll(p.Open())
		if err != nil {
			return err
		}
		for len(notes) >= 12 {
			nameSz := int(f.ByteOrder.Uint32(notes[0:]))
			descSz := int(f.ByteOrder.Uint32(notes[4:]))
			typ := f.ByteOrder.Uint32(notes[8:])
			name := notes[12:min(len(notes), 12+nameSz)]
			if string(bytes.TrimRight(name, "\x00")) == "Xen" && typ == 18 {
				return nil
			}
			next := 12 + align4(nameSz) + align4(descSz)
			if next > len(notes) {
				break
			}
			notes = notes[next:]
		}
	}
	return fmt.Errorf("uncompressed kernel has no PVH entry note (CONFIG_PVH)")
}

func align4(n int) int { return (n + 3) &^ 3 }
