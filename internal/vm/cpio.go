package vm

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// cpioWriter writes a cpio archive in the "newc" format the kernel unpacks
// as its initramfs (the format of `cpio -o -H newc`).
type cpioWriter struct {
	w    *bufio.Writer
	ino  uint32
	n    int64 // bytes written so far, for padding
	err  error
	seen map[string]bool
}

func newCpioWriter(w io.Writer) *cpioWriter {
	return &cpioWriter{w: bufio.NewWriter(w), ino: 1, seen: map[string]bool{}}
}

const (
	cpioDir  = 0o040000
	cpioFile = 0o100000
	cpioLink = 0o120000
	cpioChar = 0o020000
)

// Dir adds a directory (and, first, its missing parents).
func (c *cpioWriter) Dir(name string, perm uint32) {
	c.parents(name)
	c.entry(name, cpioDir|perm, 0, 0, nil)
}

// File adds a regular file with the given contents.
func (c *cpioWriter) File(name string, perm uint32, data []byte) {
	c.parents(name)
	c.entry(name, cpioFile|perm, 0, 0, data)
}

// Symlink adds a symbolic link name → target.
func (c *cpioWriter) Symlink(name, target string) {
	c.parents(name)
	c.entry(name, cpioLink|0o777, 0, 0, []byte(target))
}

// CharDev adds a character device node (like /dev/console, 5:1).
func (c *cpioWriter) CharDev(name string, perm, major, minor uint32) {
	c.parents(name)
	c.entry(name, cpioChar|perm, major, minor, nil)
}

// Close writes the trailer and flushes.
func (c *cpioWriter) Close() error {
	c.entry("TRAILER!!!", 0, 0, 0, nil)
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}

func (c *cpioWriter) parents(name string) {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for i := 1; i < len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		if !c.seen[p] {
			c.entry(p, cpioDir|0o755, 0, 0, nil)
		}
	}
}

func (c *cpioWriter) entry(name string, mode, rmajor, rminor uint32, data []byte) {
	name = strings.Trim(name, "/")
	if c.err != nil || (c.seen[name] && name != "TRAILER!!!") {
		return
	}
	c.seen[name] = true
	nlink := uint32(1)
	if mode&0o170000 == cpioDir {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	c.ino++
	c.write([]byte(hdr))
	c.write([]byte(name + "\x00"))
	c.pad()
	c.write(data)
	c.pad()
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}
