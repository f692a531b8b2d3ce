package nodeimage

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"strings"
	"time"
)

// layer is one part of the file system `docker import` gets: the entries
// of an existing tar file, a file copied from the host, or inline content.
type layer struct {
	Tar     string      // all entries of this tar file
	Path    string      // where the file goes in the image (absolute)
	Source  string      // the host file to copy to Path
	Content string      // or the content to write at Path
	Mode    os.FileMode // of Path
}

// writeImageTar writes the layers as one tar stream: the directories the
// files need, then every entry in order (later entries win in the image).
func writeImageTar(w io.Writer, layers []layer) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	mkdirs := func(p string) error {
		parts := strings.Split(strings.Trim(p, "/"), "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
		}
		return nil
	}
	// Docker refuses a tar that names a path twice: a base root filesystem
	// brings its own directories, the basic ones are added only without.
	hasBase := len(layers) > 0 && layers[0].Tar != ""
	for _, d := range []string{"tmp/", "etc/", "var/", "run/"} {
		if hasBase {
			break
		}
		dirs[d] = true
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
	}
	for _, l := range layers {
		switch {
		case l.Tar != "":
			if err := copyTar(tw, l.Tar, dirs); err != nil {
				return err
			}
		case l.Source != "" || l.Path != "":
			if err := mkdirs(l.Path); err != nil {
				return err
			}
			var data []byte
			if l.Source != "" {
				var err error
				if data, err = os.ReadFile(l.Source); err != nil {
					return err
				}
			} else {
				data = []byte(l.Content)
			}
			mode := l.Mode
			if mode == 0 {
				mode = 0o644
			}
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(l.Path, "/"), Mode: int64(mode), Size: int64(len(data)), ModTime: time.Unix(0, 0)}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
		default:
			return errors.New("empty image layer")
		}
	}
	return tw.Close()
}

// copyTar copies every entry of the tar file at path (its directories are
// remembered so later files do not repeat them).
func copyTar(tw *tar.Writer, path string, dirs map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		hdr.Name = strings.TrimPrefix(hdr.Name, "./")
		if hdr.Name == "" {
			continue
		}
		if hdr.Typeflag == tar.TypeDir {
			if !strings.HasSuffix(hdr.Name, "/") {
				hdr.Name += "/"
			}
			if dirs[hdr.Name] {
				continue
			}
			dirs[hdr.Name] = true
		}
		if hdr.Typeflag == tar.TypeLink {
			hdr.Linkname = strings.TrimPrefix(hdr.Linkname, "./")
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}
