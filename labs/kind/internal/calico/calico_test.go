package calico

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stand-in manifest: calico.yaml's pool entry commented out, as upstream
// ships it.
const testManifest = `kind: DaemonSet
metadata:
  name: calico-node
spec:
  template:
    spec:
      containers:
        - name: calico-node
          image: docker.io/calico/node:v9.9.9
          env:
            # - name: CALICO_IPV4POOL_CIDR
            #   value: "192.168.0.0/16"
            - name: CALICO_DISABLE_FILE_LOGGING
              value: "true"
`

func pinFor(data string) Pin {
	sum := sha256.Sum256([]byte(data))
	return Pin{Version: "v9.9.9", URL: "https://example.invalid/calico.yaml", SHA256: hex.EncodeToString(sum[:]), Registry: "registry.example.invalid"}
}

// fetcher serves body and counts calls.
type fetcher struct {
	body  string
	err   error
	calls int
}

func (f *fetcher) fetch(ctx context.Context, url string) (io.ReadCloser, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return io.NopCloser(strings.NewReader(f.body)), nil
}

func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		status    int
		reachable bool
	}{
		{http.StatusOK, true},
		{http.StatusUnauthorized, true},
		{http.StatusForbidden, false},
		{http.StatusNotFound, false},
		{http.StatusBadGateway, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v2/" || r.Method != http.MethodGet {
				t.Errorf("probe asked %s %s, want GET /v2/", r.Method, r.URL.Path)
			}
			w.WriteHeader(tc.status)
		}))
		err := Probe(context.Background(), srv.Client(), srv.URL+"/v2/")
		srv.Close()
		if (err == nil) != tc.reachable {
			t.Errorf("status %d: got %v, want reachable=%v", tc.status, err, tc.reachable)
		}
		if err != nil && !strings.Contains(err.Error(), "--cni calico-proxyarp") {
			t.Errorf("status %d: error %q does not suggest --cni calico-proxyarp", tc.status, err)
		}
	}
	// Nobody listening: a closed server's address.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/v2/"
	srv.Close()
	err := Probe(context.Background(), http.DefaultClient, url)
	if err == nil || !strings.Contains(err.Error(), "needs a container registry") || !strings.Contains(err.Error(), "calico-proxyarp") {
		t.Errorf("no server: got %v", err)
	}
}

func TestProbeURL(t *testing.T) {
	if got := ProbeURL(Release.Registry); got != "https://registry-1.docker.io/v2/" {
		t.Errorf("ProbeURL = %q", got)
	}
}

func TestManifestDownloadsVerifiesAndCaches(t *testing.T) {
	root := t.TempDir()
	pin := pinFor(testManifest)
	f := &fetcher{body: testManifest}
	m, err := Manifest(context.Background(), pin, root, f.fetch)
	if err != nil || m != testManifest {
		t.Fatalf("Manifest: %q, %v", m, err)
	}
	cached, err := os.ReadFile(filepath.Join(root, "calico", "v9.9.9", "calico.yaml"))
	if err != nil || string(cached) != testManifest {
		t.Fatalf("cache: %q, %v", cached, err)
	}
	// Second time from the cache: no download.
	if m, err := Manifest(context.Background(), pin, root, f.fetch); err != nil || m != testManifest || f.calls != 1 {
		t.Errorf("cached Manifest: %v, %d downloads", err, f.calls)
	}
	// A tampered cache is not used: downloaded again and replaced.
	if err := os.WriteFile(CachePath(root, pin), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := Manifest(context.Background(), pin, root, f.fetch); err != nil || m != testManifest || f.calls != 2 {
		t.Errorf("after tampering: %v, %d downloads", err, f.calls)
	}
}

func TestManifestChecksumMismatch(t *testing.T) {
	root := t.TempDir()
	pin := pinFor(testManifest)
	f := &fetcher{body: testManifest + "# changed\n"}
	_, err := Manifest(context.Background(), pin, root, f.fetch)
	if err == nil || !strings.Contains(err.Error(), "sha256") || !strings.Contains(err.Error(), pin.SHA256) || !strings.Contains(err.Error(), "not applying") {
		t.Fatalf("mismatch: got %v", err)
	}
	if _, err := os.Stat(CachePath(root, pin)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a mismatching manifest was cached: %v", err)
	}
}

func TestManifestSizeBound(t *testing.T) {
	big := strings.Repeat("#", MaxManifestBytes+1)
	pin := pinFor(big)
	_, err := Manifest(context.Background(), pin, t.TempDir(), (&fetcher{body: big}).fetch)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized: got %v", err)
	}
	exact := strings.Repeat("#", MaxManifestBytes)
	if _, err := Manifest(context.Background(), pinFor(exact), t.TempDir(), (&fetcher{body: exact}).fetch); err != nil {
		t.Errorf("exactly %d bytes: %v", MaxManifestBytes, err)
	}
}

func TestManifestDownloadError(t *testing.T) {
	_, err := Manifest(context.Background(), pinFor(testManifest), t.TempDir(), (&fetcher{err: errors.New("boom")}).fetch)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("got %v", err)
	}
}

func TestHTTPFetcher(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, testManifest)
	}))
	defer srv.Close()
	fetch := HTTPFetcher(srv.Client())
	body, err := fetch(context.Background(), srv.URL+"/calico.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	io.Copy(&b, body)
	body.Close()
	if b.String() != testManifest {
		t.Errorf("body %q", b.String())
	}
	if _, err := fetch(context.Background(), srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: got %v", err)
	}
}

func TestPinValidate(t *testing.T) {
	good := pinFor(testManifest)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Pin){
		"version with a path": func(p *Pin) { p.Version = "../v1.2.3" },
		"version not semver":  func(p *Pin) { p.Version = "master" },
		"http url":            func(p *Pin) { p.URL = "http://example.invalid/calico.yaml" },
		"no registry":         func(p *Pin) { p.Registry = "" },
		"upper-case sha":      func(p *Pin) { p.SHA256 = strings.ToUpper(p.SHA256) },
		"short sha":           func(p *Pin) { p.SHA256 = p.SHA256[:63] },
	} {
		p := good
		mutate(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	p := good
	p.SHA256 = ""
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "not pinned") || !strings.Contains(err.Error(), "calico-proxyarp") {
		t.Errorf("unpinned: got %v", err)
	}
	// Nothing is fetched for an invalid pin.
	f := &fetcher{body: testManifest}
	if _, err := Manifest(context.Background(), p, t.TempDir(), f.fetch); err == nil || f.calls != 0 {
		t.Errorf("unpinned Manifest: %v, %d downloads", err, f.calls)
	}
}

// The release pin: a version, the manifest at that tag on
// raw.githubusercontent.com, docker.io's registry API host.
func TestRelease(t *testing.T) {
	if !versionRE.MatchString(Release.Version) {
		t.Errorf("version %q", Release.Version)
	}
	want := "https://raw.githubusercontent.com/projectcalico/calico/" + Release.Version + "/manifests/calico.yaml"
	if Release.URL != want {
		t.Errorf("url %q, want %q", Release.URL, want)
	}
	if Release.SHA256 != "" && !sha256RE.MatchString(Release.SHA256) {
		t.Errorf("sha256 %q", Release.SHA256)
	}
	if got := Release.Describe(); got != "calico "+Release.Version+" (upstream manifest)" {
		t.Errorf("Describe = %q", got)
	}
}

func TestPoolCIDR(t *testing.T) {
	p, err := PoolCIDR(testManifest)
	if err != nil || p != netip.MustParsePrefix(DefaultPoolCIDR) {
		t.Errorf("commented out: %v, %v", p, err)
	}
	set := strings.Replace(testManifest, "            # - name: CALICO_IPV4POOL_CIDR\n            #   value: \"192.168.0.0/16\"",
		"            - name: CALICO_IPV4POOL_CIDR\n              value: \"10.244.0.0/16\"", 1)
	if p, err := PoolCIDR(set); err != nil || p != netip.MustParsePrefix("10.244.0.0/16") {
		t.Errorf("set: %v, %v", p, err)
	}
	bad := strings.Replace(set, "10.244.0.0/16", "10.244.0.0/99", 1)
	if _, err := PoolCIDR(bad); err == nil || !strings.Contains(err.Error(), "CALICO_IPV4POOL_CIDR") {
		t.Errorf("bad value: %v", err)
	}
}

func TestCheckPodSubnet(t *testing.T) {
	pool := netip.MustParsePrefix(DefaultPoolCIDR)
	if err := CheckPodSubnet("192.168.0.0/16", "10.244.0.0/16", pool); err != nil {
		t.Error(err)
	}
	err := CheckPodSubnet("", "10.244.0.0/16", pool)
	if err == nil || !strings.Contains(err.Error(), "10.244.0.0/16") || !strings.Contains(err.Error(), "192.168.0.0/16") {
		t.Errorf("default podSubnet: got %v, want an error naming both", err)
	}
	if err := CheckPodSubnet("192.168.0.0/33", "", pool); err == nil || !strings.Contains(err.Error(), "podSubnet") {
		t.Errorf("bad podSubnet: got %v", err)
	}
}

// --calico-manifest-sha256 completes an unpinned build's pin, never
// overrides a pinned one, and is checked for form.
func TestWithSHA256(t *testing.T) {
	pinned := pinFor(testManifest)
	unpinned := pinned
	unpinned.SHA256 = ""
	other := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name    string
		pin     Pin
		sum     string
		want    string // the pin's sha256 after, when no error
		wantErr string
	}{
		{"unpinned, none given", unpinned, "", "", ""},
		{"unpinned, given", unpinned, other, other, ""},
		{"unpinned, given in capitals with spaces", unpinned, " " + strings.ToUpper(other) + "\n", other, ""},
		{"pinned, none given", pinned, "", pinned.SHA256, ""},
		{"pinned, the same given", pinned, pinned.SHA256, pinned.SHA256, ""},
		{"pinned, another given", pinned, other, "", "pins calico"},
		{"not hex", unpinned, strings.Repeat("zz", 32), "", "64 hex digits"},
		{"too short", unpinned, other[:62], "", "64 hex digits"},
	} {
		got, err := tc.pin.WithSHA256(tc.sum)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr == "" && got.SHA256 != tc.want:
			t.Errorf("%s: sha256 %q, want %q", tc.name, got.SHA256, tc.want)
		}
	}
	// The user's sum is what the download is verified against.
	p, err := unpinned.WithSHA256(other)
	if err != nil {
		t.Fatal(err)
	}
	f := &fetcher{body: testManifest}
	if _, err := Manifest(context.Background(), p, t.TempDir(), f.fetch); err == nil || !strings.Contains(err.Error(), "not applying it") {
		t.Errorf("a manifest that does not match the given sha256: %v", err)
	}
}
