package vm

import (
	"io"
	"os"
	"sync"
	"syscall"
)

// channel is one stream from the guest: a socket pair whose one end qemu
// gets (as a chardev fd) and whose other end is copied to a writer here.
type channel struct {
	child  *os.File // qemu's end, closed here once qemu has it
	parent *os.File
	done   chan struct{}
	err    error
}

func newChannel(name string) (*channel, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	return &channel{
		child:  os.NewFile(uintptr(fds[0]), name+"-qemu"),
		parent: os.NewFile(uintptr(fds[1]), name),
		done:   make(chan struct{}),
	}, nil
}

// copyTo copies what the guest sends to w until qemu closes its end
// (it exits). A nil w discards.
func (c *channel) copyTo(w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	go func() {
		defer close(c.done)
		_, c.err = io.Copy(w, c.parent)
	}()
}

// started drops this process's copy of qemu's end, so that the copy sees
// EOF when qemu exits.
func (c *channel) started() { c.child.Close() }

func (c *channel) close() {
	c.child.Close()
	c.parent.Close()
}

// tailBuffer keeps the last max bytes written to it (the console, for error
// messages) and passes everything on to w when w is not nil.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
	w   io.Writer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	t.mu.Unlock()
	if t.w != nil {
		t.w.Write(p) // the console copy is best effort
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
