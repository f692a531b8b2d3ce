package nodeimage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
)

// tamperedMirror is a Debian mirror whose Release file is not signed by
// Debian (a mirror taken over, or anyone on the way of plain http): it
// lists a Packages index, which it serves too; every path asked is kept.
type tamperedMirror struct {
	mu    sync.Mutex
	asked []string
}

func (m *tamperedMirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.asked = append(m.asked, r.URL.Path)
	m.mu.Unlock()
	switch r.URL.Path {
	case "/debian/dists/bookworm/Release":
		w.Write([]byte("Origin: Debian\nSuite: stable\nCodename: bookworm\nArchitectures: amd64\nComponents: main\n" +
			"SHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 main/binary-amd64/Packages\n"))
	case "/debian/dists/bookworm/Release.gpg":
		w.Write([]byte("-----BEGIN PGP SIGNATURE-----\n\nnot Debian's signature\n-----END PGP SIGNATURE-----\n"))
	case "/debian/dists/bookworm/main/binary-amd64/Packages":
	default:
		http.NotFound(w, r)
	}
}

// beyondRelease lists what was asked besides the Release file and its
// signature: what debootstrap fetches only once it trusts the Release.
func (m *tamperedMirror) beyondRelease() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var more []string
	for _, p := range m.asked {
		if !slices.Contains([]string{"/debian/dists/bookworm/InRelease", "/debian/dists/bookworm/Release", "/debian/dists/bookworm/Release.gpg"}, p) {
			more = append(more, p)
		}
	}
	return more
}

// The node image's debootstrap, given a mirror whose Release file Debian
// did not sign, stops before it fetches anything the Release lists: with
// Debian's keyring there (the signature is refused) and without it (a host
// where debian-archive-keyring, only Recommended by debootstrap, is not
// installed: svclab's old debootstrap warned "Cannot check Release
// signature" and went on to install what the mirror served). The host
// without the keyring is played in a mount namespace of the test's, with
// an empty tmpfs over /usr/share/keyrings.
func TestIntegrationDebootstrapRefusesATamperedMirror(t *testing.T) {
	roottest.Require(t, "runs debootstrap")
	// As svclab create cluster does: debootstrap and Debian's keyring
	// are installed when missing.
	if err := hostprog.Ensure(context.Background(), os.Stderr, append([]string{"debootstrap"}, hostprog.NeedsFiles(hostprog.Cluster)...)...); err != nil {
		t.Fatalf("installing debootstrap: %v", err)
	}
	for _, keyring := range []bool{true, false} {
		m := &tamperedMirror{}
		srv := httptest.NewServer(m)
		args := debootstrapArgs(Versions{Suite: "bookworm", Mirror: srv.URL + "/debian"}, filepath.Join(t.TempDir(), "rootfs"))
		hide := ""
		if !keyring {
			hide = "mount -t tmpfs tmpfs /usr/share/keyrings; "
		}
		cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-ec", hide + `exec "$@"`, "sh"}, args...)...)
		out, err := cmd.CombinedOutput()
		srv.Close()
		if err == nil {
			t.Errorf("keyring=%v: debootstrap from a tampered mirror succeeded:\n%s", keyring, out)
		}
		if more := m.beyondRelease(); len(more) > 0 {
			t.Errorf("keyring=%v: debootstrap trusted the tampered Release and fetched %v:\n%s", keyring, more, out)
		}
		if strings.Contains(string(out), "Cannot check Release signature") {
			t.Errorf("keyring=%v: debootstrap went on without checking the signature:\n%s", keyring, out)
		}
		t.Logf("keyring=%v: debootstrap: %v: %s", keyring, err, lastLine(string(out)))
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
