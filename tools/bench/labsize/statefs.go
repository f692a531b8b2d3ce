package labsize

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fsNames are the filesystems a lab's state may live on, by statfs magic.
var fsNames = map[int64]string{
	unix.TMPFS_MAGIC:           "tmpfs",
	unix.EXT4_SUPER_MAGIC:      "ext4",
	unix.XFS_SUPER_MAGIC:       "xfs",
	unix.BTRFS_SUPER_MAGIC:     "btrfs",
	unix.OVERLAYFS_SUPER_MAGIC: "overlay",
}

// fsName names the filesystem of statfs magic, or gives the magic in hex.
func fsName(magic int64) string {
	if n, ok := fsNames[magic]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", magic)
}

// stateFilesystem names the filesystem that holds dir (or, before the
// first lab makes it, its nearest existing parent): a lab's every pod
// creates files there (its status, log, spec and object), and how fast
// depends on it. /run is a tmpfs on Debian; where it is ext4 without a
// journal, as on some VMs, creating a file passes over every inode freed
// in the last minutes (ext4's recently_deleted), so a lab built soon
// after another's delete starts its pods several times slower.
func stateFilesystem(dir string) (string, error) {
	for {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return fsName(int64(st.Type)), nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || parent == dir {
			return "", fmt.Errorf("statfs %s: %w", dir, err)
		}
		dir = parent
	}
}
