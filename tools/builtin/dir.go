package builtin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svclab/svclab/clusters"
	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/privdir"
)

// files are the built-in files (package clusters); tests replace them.
var files = clusters.FS

// Dir returns the folder holding the built-in files on disk (the
// checkout's clusters/ folder as this binary embeds it), writing them
// there the first time (see the package doc). The first base folder
// (baseDirs) that works holds them; when none does, the first one's error
// is the error.
func Dir() (string, error) {
	var first error
	for _, base := range baseDirs() {
		dir, err := extract(files, base)
		if err == nil {
			return dir, nil
		}
		if first == nil {
			first = err
		}
	}
	return "", first
}

// baseDirs are where the built-in files' folders may go for this user, in
// order: beside the labs' state for root; the user's cache, else a folder
// of the user's own in the temporary directory (a user without a home,
// such as nobody), for others.
var baseDirs = func() []string {
	if os.Geteuid() == 0 {
		return []string{filepath.Join(filepath.Dir(labstore.Root()), "builtin")}
	}
	var out []string
	if cache, err := os.UserCacheDir(); err == nil && filepath.IsAbs(cache) {
		out = append(out, filepath.Join(cache, "svclab", "builtin"))
	}
	return append(out, filepath.Join(os.TempDir(), "svclab-builtin-"+strconv.Itoa(os.Geteuid())))
}

// extracted remembers Dir's answer for this process.
var extracted struct {
	sync.Mutex
	base, dir string
}

// extract writes fsys into base/HASH (HASH of its paths and contents)
// unless it is there already, and returns that folder. base is made
// private (privdir.Ensure); the folder is written under a temporary name
// and renamed into place whole, so an interrupted or concurrent run never
// leaves a half-written one under HASH.
func extract(fsys fs.FS, base string) (string, error) {
	extracted.Lock()
	defer extracted.Unlock()
	if extracted.base == base && extracted.dir != "" {
		return extracted.dir, nil
	}
	if err := privdir.Ensure(base); err != nil {
		return "", fmt.Errorf("the built-in files: %w", err)
	}
	sum, err := hashFS(fsys)
	if err != nil {
		return "", fmt.Errorf("the built-in files: %w", err)
	}
	dir := filepath.Join(base, sum)
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		extracted.base, extracted.dir = base, dir
		return dir, nil
	}
	removeStaleTemps(base)
	tmp, err := os.MkdirTemp(base, tempPrefix+sum+"-")
	if err != nil {
		return "", fmt.Errorf("the built-in files: %w", err)
	}
	if err := os.CopyFS(tmp, fsys); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("the built-in files: writing them into %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		// Another svclab put the same files there meanwhile.
		if fi, serr := os.Lstat(dir); serr != nil || !fi.IsDir() {
			return "", fmt.Errorf("the built-in files: %w", err)
		}
	}
	extracted.base, extracted.dir = base, dir
	return dir, nil
}

// tempPrefix starts the name of a folder extract is writing.
const tempPrefix = ".tmp-"

// staleAfter is how old a temporary folder must be to be taken for an
// interrupted extract's (writing one takes milliseconds).
const staleAfter = time.Hour

// removeStaleTemps removes what interrupted extracts left in base.
func removeStaleTemps(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// hashFS is the first 16 hex digits of the sha256 of fsys's files: each
// one's path and length, then its bytes, in WalkDir's (lexical) order.
func hashFS(fsys fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", path)
		}
		f, err := fsys.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, fi.Size())
		n, err := io.Copy(h, f)
		if err == nil && n != fi.Size() {
			err = errors.New(path + ": changed while read")
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
