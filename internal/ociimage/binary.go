package ociimage

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// MaxBinarySize bounds each binary put into the image (svclab's are about
// 100 MB): a larger file is refused before it is read.
const MaxBinarySize = 1 << 30

// maxInterpreter bounds the ELF interpreter's path read for the error.
const maxInterpreter = 4096

// elfMachines maps a GOARCH to the ELF machine its binaries have.
var elfMachines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"386":     elf.EM_386,
	"arm":     elf.EM_ARM,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
	"loong64": elf.EM_LOONGARCH,
}

// binary is one file going into the image, opened once: it is checked
// and copied from the same descriptor, so a file replaced in between
// cannot slip in unchecked.
type binary struct {
	file *os.File
	size int64
	// path is where the file goes in the image ("/svclab").
	path string
}

// openBinary opens the file at source for the image path dest and checks
// it: a regular file of at most MaxBinarySize bytes, an ELF executable
// for linux/runtime.GOARCH, statically linked.
func openBinary(source, dest string) (*binary, error) {
	f, err := os.Open(source)
	if err != nil {
		return nil, err
	}
	size, err := checkBinary(f, source, runtime.GOARCH)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &binary{file: f, size: size, path: dest}, nil
}

// content reads the binary from its start, exactly size bytes.
func (b *binary) content() io.Reader { return io.NewSectionReader(b.file, 0, b.size) }

func (b *binary) close() error { return b.file.Close() }

// checkBinary says why f (opened from path) cannot go into an image for
// arch, or returns its size.
func checkBinary(f *os.File, path, arch string) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > MaxBinarySize {
		return 0, fmt.Errorf("%s: %d bytes, more than the %d an image's binary may have", path, st.Size(), MaxBinarySize)
	}
	ef, err := elf.NewFile(io.NewSectionReader(f, 0, st.Size()))
	if err != nil {
		return 0, fmt.Errorf("%s: not an ELF executable (%v): the image holds svclab's Linux binaries", path, err)
	}
	if ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN {
		return 0, fmt.Errorf("%s: an ELF %s, not an executable", path, ef.Type)
	}
	if want, ok := elfMachines[arch]; !ok || ef.Machine != want {
		return 0, fmt.Errorf("%s: built for %s, not for %s (the image's platform linux/%s)", path, ef.Machine, arch, arch)
	}
	if interp, dynamic := interpreter(ef); dynamic {
		return 0, fmt.Errorf("%s: dynamically linked (ELF interpreter %s), and the image has no C library: build it statically, with CGO_ENABLED=0 (CGO_ENABLED=0 make build)", path, interp)
	}
	return st.Size(), nil
}

// interpreter is the binary's ELF interpreter (PT_INTERP: the dynamic
// loader), and whether it has one.
func interpreter(ef *elf.File) (string, bool) {
	for _, p := range ef.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(p.Open(), maxInterpreter))
		if err != nil || len(data) == 0 {
			return "(unreadable)", true
		}
		return strings.TrimRight(string(data), "\x00"), true
	}
	return "", false
}
