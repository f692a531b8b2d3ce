// Package ocitest gives ociimage's tests and its callers' the inputs an
// image is built from and a registry to push it to, without a compiler,
// docker or the network: small ELF files (static or with an interpreter)
// and go-containerregistry's registry served on loopback.
package ocitest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Machine is the ELF machine of this GOARCH's binaries; the test is
// skipped on an architecture ocitest does not know.
func Machine(t testing.TB) elf.Machine {
	switch runtime.GOARCH {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	}
	t.Skipf("skipped: ocitest makes ELF files for amd64 and arm64, not %s", runtime.GOARCH)
	return 0
}

// WriteELF writes a little-endian 64-bit ELF executable for machine to
// path, mode 0755: its header, a PT_INTERP program header naming interp
// when interp is not "" (a dynamically linked binary), then payload.
func WriteELF(t testing.TB, path string, machine elf.Machine, interp string, payload []byte) {
	t.Helper()
	const headerSize, progSize = 64, 56
	var buf bytes.Buffer
	hdr := elf.Header64{
		Type:      uint16(elf.ET_EXEC),
		Machine:   uint16(machine),
		Version:   uint32(elf.EV_CURRENT),
		Entry:     0x401000,
		Ehsize:    headerSize,
		Phentsize: progSize,
		Shentsize: 64,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	var progs []elf.Prog64
	if interp != "" {
		hdr.Phoff, hdr.Phnum = headerSize, 1
		off := uint64(headerSize + progSize)
		n := uint64(len(interp) + 1)
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Off: off, Vaddr: 0x400000 + off, Paddr: 0x400000 + off, Filesz: n, Memsz: n, Align: 1})
	}
	mustWrite(t, binary.Write(&buf, binary.LittleEndian, hdr))
	for _, p := range progs {
		mustWrite(t, binary.Write(&buf, binary.LittleEndian, p))
	}
	if interp != "" {
		buf.WriteString(interp + "\x00")
	}
	buf.Write(payload)
	if err := os.WriteFile(path, buf.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Registry serves go-containerregistry's in-memory registry on loopback
// until the test ends and returns its host:port (go-containerregistry
// speaks plain HTTP to loopback addresses).
func Registry(t testing.TB) string {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// RefusingRegistry serves a registry that answers every request 401
// Unauthorized with a Basic challenge, as one does to a client without
// credentials, and returns its host:port.
func RefusingRegistry(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="ocitest"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`) //nolint:errcheck // the client may hang up
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
