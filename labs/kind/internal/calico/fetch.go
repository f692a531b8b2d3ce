package calico

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// Fetcher opens a URL's body (tests inject one; HTTPFetcher is the real).
type Fetcher func(ctx context.Context, url string) (io.ReadCloser, error)

// HTTPFetcher GETs url with client; a status other than 200 is an error.
func HTTPFetcher(client *http.Client) Fetcher {
	return func(ctx context.Context, url string) (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return resp.Body, nil
	}
}

// CachePath is where the pinned manifest is kept under the kind cache
// root: root/calico/<version>/calico.yaml (Validate makes the version a
// plain vX.Y.Z, so the path stays inside root).
func CachePath(root string, p Pin) string {
	return filepath.Join(root, "calico", p.Version, "calico.yaml")
}

// Manifest returns the pinned manifest: from the cache when the file
// there has the pinned hash, else downloaded with fetch, bounded by
// MaxManifestBytes, verified, and then cached. A wrong hash or size is an
// error and nothing is cached.
func Manifest(ctx context.Context, p Pin, root string, fetch Fetcher) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	path := CachePath(root, p)
	if data, err := readBounded(path); err == nil && Verify(data, p) == nil {
		return string(data), nil
	}
	data, err := download(ctx, p, fetch)
	if err != nil {
		return "", err
	}
	if err := Verify(data, p); err != nil {
		return "", err
	}
	if err := writeAtomic(path, data); err != nil {
		return "", fmt.Errorf("caching calico %s manifest: %w", p.Version, err)
	}
	return string(data), nil
}

// Verify checks data against the pinned sha256.
func Verify(data []byte, p Pin) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != p.SHA256 {
		return fmt.Errorf("calico %s manifest %s: sha256 %s, want the pinned %s; not applying it", p.Version, p.URL, got, p.SHA256)
	}
	return nil
}

func download(ctx context.Context, p Pin, fetch Fetcher) ([]byte, error) {
	body, err := fetch(ctx, p.URL)
	if err != nil {
		return nil, fmt.Errorf("downloading calico %s manifest: %w", p.Version, err)
	}
	defer body.Close()
	data, err := readLimited(body)
	if err != nil {
		return nil, fmt.Errorf("calico %s manifest %s: %w", p.Version, p.URL, err)
	}
	return data, nil
}

// readLimited reads at most MaxManifestBytes; more is an error.
func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxManifestBytes)
	}
	return data, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f)
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calico-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
