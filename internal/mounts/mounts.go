// Package mounts finds and removes the mount points below a directory, so
// that a tree another program mounted into (debootstrap's /proc in a root
// filesystem it was building, a daemon's overlay mounts) can be removed
// without descending into what is mounted there: os.RemoveAll would fail on
// /proc, or delete a bind-mounted directory's files.
package mounts

import (
	"bufio"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Below lists the mount points strictly below the given directories, as
// the calling thread's mount namespace has them (/proc/thread-self: a
// thread may have left the process's namespace, as the tests' do), deepest
// first.
func Below(dirs ...string) ([]string, error) {
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return below(f, dirs...)
}

// below is Below reading mountinfo from r.
func below(r io.Reader, dirs ...string) ([]string, error) {
	var points []string
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescape(fields[4])
		for _, d := range dirs {
			if strings.HasPrefix(mp, strings.TrimSuffix(d, "/")+"/") {
				points = append(points, mp)
				break
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	return points, nil
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and
// backslash ("\040").
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UnmountBelow lazily unmounts (umount -l) every mount point below the
// given directories, deepest first, and returns how many it unmounted.
func UnmountBelow(dirs ...string) int {
	points, err := Below(dirs...)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range points {
		if syscall.Unmount(p, syscall.MNT_DETACH) == nil {
			n++
		}
	}
	return n
}

// RemoveAll removes dir like os.RemoveAll, after unmounting what is mounted
// below it; a mount point it could not unmount is an error, and nothing is
// removed.
func RemoveAll(dir string) error {
	UnmountBelow(dir)
	left, err := Below(dir)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return &os.PathError{Op: "remove", Path: dir, Err: errMounted(left[0])}
	}
	return os.RemoveAll(dir)
}

type errMounted string

func (e errMounted) Error() string { return "still mounted below it: " + string(e) }
