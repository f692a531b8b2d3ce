package cache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
)

// captureNotices sends the notices of ignored variables to a buffer for
// the test, and forgets the ones already said.
func captureNotices(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	noticeMu.Lock()
	old := noticeTo
	noticeTo, noticeSaid = &buf, map[string]bool{}
	noticeMu.Unlock()
	t.Cleanup(func() {
		noticeMu.Lock()
		noticeTo, noticeSaid = old, map[string]bool{}
		noticeMu.Unlock()
	})
	return &buf
}

// TestAttackersCacheFolderIsIgnoredUnderRoot plays finding 8 of the
// hardening issue: a user's XDG_CACHE_HOME (or SVCLAB_KIND_CACHE) reaches
// root through `sudo -E`; a folder nobody made there would hold svclab's
// dockerd's data root and the node images root builds and runs. Root's
// svclab ignores it, says so in one line, and uses its own cache.
func TestAttackersCacheFolderIsIgnoredUnderRoot(t *testing.T) {
	roottest.Require(t, "plays root against a folder of nobody's")
	planted := filepath.Join(roottest.SharedTmp(t), "cache")
	roottest.RunAsNobody(t, `mkdir "$1"`, planted)
	for _, name := range []string{"XDG_CACHE_HOME", "SVCLAB_KIND_CACHE"} {
		t.Run(name, func(t *testing.T) {
			notices := captureNotices(t)
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("SVCLAB_KIND_CACHE", "")
			t.Setenv(name, planted)
			if got := Dir(); got != RootDefault {
				t.Errorf("%s=%s (nobody's folder): Dir() = %s, want %s", name, planted, got, RootDefault)
			}
			Dir() // said once
			lines := strings.Split(strings.TrimSpace(notices.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "ignoring "+name+"="+planted) || !strings.Contains(lines[0], "owned by uid") {
				t.Errorf("notice %q, want one line saying %s is ignored and why", notices.String(), name)
			}
		})
	}
}

// TestRootOwnedFolders: a folder counts when it and every folder above it
// are root's and writable by no one else; a root-owned folder inside a
// world-writable one (/tmp) does not.
func TestRootOwnedFolders(t *testing.T) {
	roottest.Require(t, "checks root's ownership")
	if err := rootOwned("/usr/lib/svclab-not-made-yet/kind"); err != nil {
		t.Errorf("rootOwned(/usr/lib/…): %v", err)
	}
	shared := roottest.SharedTmp(t)
	inside := filepath.Join(shared, "root-owned")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rootOwned(inside); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("rootOwned(%s, in a world-writable folder) = %v, want a refusal", inside, err)
	}
	if err := rootOwned("relative/cache"); err == nil {
		t.Error("a relative path counted as root's")
	}
}

// TestChooseTheCache: the order of the variables, and that only root
// checks them.
func TestChooseTheCache(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	trustNone := func(string) error { return errors.New("owned by uid 1000") }
	trustAll := func(string) error { return nil }
	for _, c := range []struct {
		name    string
		euid    int
		env     map[string]string
		trusted func(string) error
		want    string
		notice  bool
	}{
		{"root, SVCLAB_KIND_CACHE root's", 0, map[string]string{"SVCLAB_KIND_CACHE": "/srv/c", "XDG_CACHE_HOME": "/x"}, trustAll, "/srv/c", false},
		{"root, XDG_CACHE_HOME root's", 0, map[string]string{"XDG_CACHE_HOME": "/root/.cache"}, trustAll, "/root/.cache/svclab/kind", false},
		{"root, both a user's", 0, map[string]string{"SVCLAB_KIND_CACHE": "/home/u/c", "XDG_CACHE_HOME": "/home/u/.cache"}, trustNone, RootDefault, true},
		{"root, none", 0, nil, trustNone, RootDefault, false},
		{"a user, theirs", 1000, map[string]string{"XDG_CACHE_HOME": "/home/u/.cache"}, trustNone, "/home/u/.cache/svclab/kind", false},
	} {
		got, notice := choose(c.euid, env(c.env), c.trusted)
		if got != c.want || (notice != "") != c.notice {
			t.Errorf("%s: choose = %s, notice %q; want %s, a notice: %v", c.name, got, notice, c.want, c.notice)
		}
		if c.notice && strings.Contains(notice, "\n") {
			t.Errorf("%s: the notice is more than one line: %q", c.name, notice)
		}
	}
}
