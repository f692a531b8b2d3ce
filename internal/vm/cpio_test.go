package vm

import (
	"bytes"
	"strconv"
	"testing"
)

type cpioEntry struct {
	name       string
	mode       uint64
	rmaj, rmin uint64
	data       string
}

// readCpio parses a newc archive (what the kernel does with an initramfs).
func readCpio(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	field := func(i int) uint64 {
		v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
		if err != nil {
			t.Fatalf("header at %d: %v", off, err)
		}
		return v
	}
	for {
		if string(b[off:off+6]) != "070701" {
			t.Fatalf("bad magic at %d: %q", off, b[off:off+6])
		}
		mode, size, rmaj, rmin, namesize := field(1), field(6), field(9), field(10), field(11)
		nameStart := off + 110
		name := string(b[nameStart : nameStart+int(namesize)-1])
		dataStart := (nameStart + int(namesize) + 3) &^ 3
		data := string(b[dataStart : dataStart+int(size)])
		off = (dataStart + int(size) + 3) &^ 3
		if name == "TRAILER!!!" {
			return out
		}
		out = append(out, cpioEntry{name, mode, rmaj, rmin, data})
	}
}

func TestCpioNewc(t *testing.T) {
	var buf bytes.Buffer
	w := newCpioWriter(&buf)
	w.File("lib/modules/kernel/fs/9p/9p.ko", 0o644, []byte("abcde"))
	w.Dir("dev", 0o755)
	w.CharDev("dev/console", 0o600, 5, 1)
	w.Symlink("bin/sh", "busybox")
	w.File("init", 0o755, []byte("#!/bin/sh\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Fatalf("archive length %d is not 4-aligned", buf.Len())
	}
	got := map[string]cpioEntry{}
	var order []string
	for _, e := range readCpio(t, buf.Bytes()) {
		got[e.name] = e
		order = append(order, e.name)
	}
	want := []string{"lib", "lib/modules", "lib/modules/kernel", "lib/modules/kernel/fs", "lib/modules/kernel/fs/9p",
		"lib/modules/kernel/fs/9p/9p.ko", "dev", "dev/console", "bin", "bin/sh", "init"}
	if len(order) != len(want) {
		t.Fatalf("entries %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("entries %v, want %v (parents first)", order, want)
		}
	}
	if e := got["lib/modules/kernel/fs/9p/9p.ko"]; e.data != "abcde" || e.mode != cpioFile|0o644 {
		t.Errorf("file: %+v", e)
	}
	if e := got["dev/console"]; e.mode != cpioChar|0o600 || e.rmaj != 5 || e.rmin != 1 {
		t.Errorf("console node: %+v", e)
	}
	if e := got["bin/sh"]; e.mode != cpioLink|0o777 || e.data != "busybox" {
		t.Errorf("symlink: %+v", e)
	}
}
