package nlbatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Conn is a NETLINK_NETFILTER socket of the network namespace of the
// thread that dialed it, kept open from batch to batch: closing one costs
// the kernel milliseconds (7–15 ms measured), more than a small batch.
type Conn struct {
	fd  int
	buf []byte
}

// Dial opens a Conn in the calling thread's network namespace.
func Dial() (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("nf_tables netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("nf_tables netlink socket: %w", err)
	}
	return &Conn{fd: fd, buf: make([]byte, 64<<10)}, nil
}

// Close closes the socket.
func (c *Conn) Close() error { return unix.Close(c.fd) }

// Send writes the batch to the kernel and returns the kernel's error for
// its first refused message (the kernel then applied none of it). The
// kernel handles a batch within the sendmsg that carries it, committing it
// or aborting it whole, so its errors are queued by the time sendmsg
// returns: nft reads them the same way, without acknowledgements. An
// error of the socket itself leaves the Conn unusable: the caller closes
// it and dials again.
func (c *Conn) Send(b *Batch) error {
	if _, err := c.drain(nil); err != nil {
		return err
	}
	data := b.Bytes()
	if err := unix.Sendto(c.fd, data, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return &SocketError{fmt.Errorf("sending the nf_tables batch (%d messages): %w", len(b.messages), err)}
	}
	refused, err := c.drain(b)
	if err != nil {
		return err
	}
	return refused
}

// drain reads what the kernel queued, without waiting, and returns the
// first error it reports for a message of b (none when b is nil: answers
// left from before are dropped).
func (c *Conn) drain(b *Batch) (refused error, err error) {
	for {
		n, _, err := unix.Recvfrom(c.fd, c.buf, unix.MSG_DONTWAIT|unix.MSG_TRUNC)
		if errors.Is(err, unix.EAGAIN) {
			return refused, nil
		}
		if err != nil {
			return nil, &SocketError{fmt.Errorf("reading the kernel's answer to the nf_tables batch: %w", err)}
		}
		if n > len(c.buf) {
			c.buf = make([]byte, n) // the rest of this answer is lost: an error message echoes its request
			if b != nil && refused == nil {
				refused = fmt.Errorf("the kernel refused the nf_tables batch (its answer of %d bytes was truncated)", n)
			}
			continue
		}
		if b != nil && refused == nil {
			refused = b.firstError(c.buf[:n])
		}
	}
}

// SocketError is an error of the socket rather than the kernel's refusal
// of a batch.
type SocketError struct{ err error }

func (e *SocketError) Error() string { return e.err.Error() }
func (e *SocketError) Unwrap() error { return e.err }

// firstError returns the first NLMSG_ERROR with an error code among the
// messages of one datagram, naming the transaction's line it refused.
func (b *Batch) firstError(data []byte) error {
	msgs, err := syscall.ParseNetlinkMessage(data)
	if err != nil {
		return fmt.Errorf("reading the kernel's answer to the nf_tables batch: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
			continue
		}
		code := int32(binary.NativeEndian.Uint32(m.Data[:4]))
		if code == 0 {
			continue
		}
		errno := unix.Errno(-code)
		if line := b.line(m.Header.Seq); line != "" {
			return fmt.Errorf("the kernel refused %q: %w", line, errno)
		}
		return fmt.Errorf("the kernel refused the nf_tables batch: %w", errno)
	}
	return nil
}
